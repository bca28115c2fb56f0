"""The Scrapyd workflow against ``skitter server``, with the real scrapyd-client: deploy
an egg with ``scrapyd-deploy``, schedule, wait in ``listjobs.json``, read items and log."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import orjson
import pytest

from skitter.server import Server

from .conftest import PRODUCTS, api, make_project, scrapyd_deploy, shop_site, wait_for_job

pytestmark = [pytest.mark.subprocess, pytest.mark.slow]


async def test_deploy_schedule_wait_read(tmp_path: Path, server: Server, serve: Any) -> None:
    site = await serve(shop_site())
    project = make_project(tmp_path / "proj", server.url)
    status, out, err = await scrapyd_deploy(project, "--version", "r1")
    assert status == 0, err
    assert orjson.loads(out)["spiders"] == 1

    url = server.url
    assert (await api(url, "listprojects.json"))[1]["projects"] == ["shopbot"]
    assert (await api(url, "listversions.json?project=shopbot"))[1]["versions"] == ["r1"]
    assert (await api(url, "listspiders.json?project=shopbot"))[1]["spiders"] == ["products"]

    form = {"project": "shopbot", "spider": "products", "shop": site, "setting": "LOG_LEVEL=INFO"}
    status, answer = await api(url, "schedule.json", data=form)
    assert status == 200 and answer["status"] == "ok", answer
    job = answer["jobid"]
    done = await wait_for_job(url, job)
    assert done["spider"] == "products" and done["end_time"] >= done["start_time"]

    status, log = await api(url, done["log_url"].lstrip("/"))
    assert status == 200 and "cache at redis://shop:***@cache.example" in log, log
    assert "hunter2" not in log
    status, items = await api(url, done["items_url"].lstrip("/"))
    assert status == 200, log
    got = sorted((item["name"], item["price"]) for item in map(orjson.loads, items.splitlines()))
    assert got == sorted(PRODUCTS.values()), log

    status, daemon = await api(url, "daemonstatus.json")
    assert (daemon["status"], daemon["finished"], daemon["running"]) == ("ok", 1, 0)
    run = server.store.get(job)  # type: ignore[union-attr]
    assert run is not None and (run.outcome, run.exit_status, run.items) == ("finished", 0, 3)
    assert run.finish_reason == "finished" and run.settings == {"LOG_LEVEL": "INFO"}


async def test_errors_are_scrapyd_shaped(server: Server) -> None:
    status, answer = await api(server.url, "schedule.json", data={"project": "nope"})
    assert status == 400
    assert answer["status"] == "error" and answer["message"] == "'spider' parameter is required"
    status, answer = await api(server.url, "schedule.json", data={"project": "x", "spider": "y"})
    assert (status, answer["message"]) == (400, "project 'x' not found")
    status, answer = await api(
        server.url, "addversion.json", data={"project": "../x", "version": "1"}
    )
    assert status == 400 and "not a valid name" in answer["message"]
