"""``skitter crawl --ui`` and ``skitter serve``: the dashboard beside the crawl."""

from __future__ import annotations

import asyncio
import io
import os
import sys
import textwrap
from pathlib import Path
from typing import Any

import aiohttp
from rich.console import Console

from skitter import Crawler
from skitter.cli._run import UiOptions, run_with_signals

from .conftest import CRAWL_SETTINGS, TreeSite, eventually, tree_spider

SRC = str(Path(__file__).resolve().parents[2] / "src")


async def test_run_with_signals_serves_the_dashboard_and_prints_its_url(serve: Any) -> None:
    site = TreeSite()
    base = await serve(site.app)
    crawler = Crawler(tree_spider("cli"), {**CRAWL_SETTINGS, "BASE": base})
    out = io.StringIO()
    console = Console(file=out, width=200)
    task = asyncio.create_task(run_with_signals([crawler], console, False, ui=UiOptions()))
    try:
        line = await eventually(lambda: "Dashboard: " in out.getvalue() and out.getvalue())
        url = line.split("Dashboard: ", 1)[1].split()[0]
        assert url.startswith("http://127.0.0.1:")
        async with aiohttp.ClientSession() as http, http.get(url + "api/projects") as resp:
            assert resp.status == 200
            assert [p["name"] for p in await resp.json()] == ["cli"]
    finally:
        crawler.stop()
        stats, forced = await asyncio.wait_for(task, 10)
    assert not forced
    assert stats[0]["finish_reason"] == "shutdown"
    async with aiohttp.ClientSession() as http:  # stopped with the crawl
        try:
            async with http.get(url + "api/projects"):
                raise AssertionError("the dashboard outlived the crawl")
        except aiohttp.ClientConnectionError:
            pass


async def test_crawl_refuses_an_exposed_dashboard_without_a_token(tmp_path: Path) -> None:
    spider = tmp_path / "spider.py"
    spider.write_text(
        textwrap.dedent(
            """
            from skitter import Spider

            class Quiet(Spider):
                name = "quiet"
                start_urls = []
            """
        )
    )
    env = {k: v for k, v in os.environ.items() if k != "SKITTER_UI_TOKEN"}
    env["PYTHONPATH"] = SRC
    proc = await asyncio.create_subprocess_exec(
        sys.executable,
        "-m",
        "skitter",
        "crawl",
        str(spider),
        "--ui-host",
        "0.0.0.0",
        "--no-progress",
        stdout=asyncio.subprocess.PIPE,
        stderr=asyncio.subprocess.PIPE,
        env=env,
    )
    _, err = await asyncio.wait_for(proc.communicate(), 30)
    assert proc.returncode == 2, err
    assert b"without a token: pass --ui-token" in err
