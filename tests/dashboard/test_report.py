"""The run report in the dashboard: its JSON, its page (under a CSP that allows its one
style block and nothing else), the monitors panel's data, and a 404 without one."""

from __future__ import annotations

import base64
import hashlib
import re
from typing import Any

import aiohttp
import pytest

from skitter import Crawler, Spider
from skitter.dashboard import Dashboard
from skitter.exceptions import MonitorsFailed


class Few(Spider):
    name = "few"

    async def start(self) -> Any:
        yield {"name": "<script>alert(1)</script>", "price": None}


async def test_the_report_is_served_as_json_and_as_a_page() -> None:
    crawler = Crawler(
        Few,
        {
            "MONITOR_MIN_ITEMS": 5,
            "MONITOR_FIELD_COVERAGE": {"price": 1.0},
            "MONITOR_REPORT": False,  # no files: the dashboard has it from memory
            "VALIDATION_SCHEMAS": {"dict": {"properties": {"price": {"type": "number"}}}},
            "VALIDATION_INVALID": "keep",
        },
    )
    with pytest.raises(MonitorsFailed):
        await crawler.run()
    async with Dashboard([crawler.control]) as ui, aiohttp.ClientSession() as http:
        async with http.get(f"{ui.url}api/projects/few/report") as response:
            report = await response.json()
        assert report["status"] == "failed"
        assert [m["name"] for m in report["monitors"]] == ["min_items", "field_coverage"]
        async with http.get(f"{ui.url}api/overview?project=few") as response:
            detail = (await response.json())["detail"]
        assert detail["report"] == {"status": "failed", "final": True}
        assert [m["status"] for m in detail["monitors"]] == ["failed", "failed"]
        async with http.get(f"{ui.url}projects/few/report") as response:
            assert response.status == 200
            policy = response.headers["Content-Security-Policy"]
            page = await response.text()
    assert "&lt;script&gt;alert(1)&lt;/script&gt;" in page  # the sample item, escaped
    assert "<script>" not in page
    style = re.search(r"<style>(.*?)</style>", page, re.S)
    assert style is not None
    digest = base64.b64encode(hashlib.sha256(style.group(1).encode()).digest()).decode()
    assert policy.startswith("default-src 'none'; style-src 'sha256-" + digest + "'")
    assert "unsafe-inline" not in policy and "script-src" not in policy


async def test_a_project_without_monitors_has_no_report() -> None:
    crawler = Crawler(Few)
    await crawler.run()
    async with Dashboard([crawler.control]) as ui, aiohttp.ClientSession() as http:
        async with http.get(f"{ui.url}api/projects/few/report") as response:
            assert response.status == 404
            assert "has no run report" in (await response.json())["error"]
        async with http.get(f"{ui.url}api/overview") as response:
            detail = (await response.json())["detail"]
    assert detail["monitors"] == [] and detail["report"] is None
