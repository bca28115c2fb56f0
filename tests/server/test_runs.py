"""Runs as the service keeps them: cancelled, interrupted by a stop or a kill of the
service (never shown finished), a directory deploy, the access rules."""

from __future__ import annotations

import asyncio
import base64
import contextlib
import os
import signal
import sys
from pathlib import Path
from typing import Any

import aiohttp
import pytest

from skitter.exceptions import ConfigError
from skitter.server import Server, ServerOptions

from .conftest import (
    SRC,
    HangingSite,
    api,
    deploy_directory,
    make_project,
    schedule,
    shop_site,
    wait_for_job,
)

pytestmark = [pytest.mark.subprocess, pytest.mark.slow]


async def test_cancel_a_running_job(tmp_path: Path, server: Server, serve: Any) -> None:
    site = HangingSite()
    base = await serve(site.app)
    await deploy_directory(server.url, make_project(tmp_path / "proj", server.url))
    job = await schedule(server.url, base)
    running = await wait_for_job(server.url, job, "running")
    assert running["pid"] > 0
    status, answer = await api(server.url, "cancel.json", data={"project": "shopbot", "job": job})
    assert (status, answer["prevstate"]) == (200, "running")
    await wait_for_job(server.url, job, "finished")
    run = server.store.get(job)  # type: ignore[union-attr]
    assert run is not None and run.outcome == "cancelled"
    site.release.set()


async def test_a_stopped_service_shows_its_run_interrupted(tmp_path: Path, serve: Any) -> None:
    site = HangingSite()
    base = await serve(site.app)
    options = ServerOptions(data_dir=tmp_path / "data", port=0)
    first = Server(options)
    await first.start()
    try:
        await deploy_directory(first.url, make_project(tmp_path / "proj", first.url))
        job = await schedule(first.url, base)
        await wait_for_job(first.url, job, "running")
    finally:
        await first.stop()  # the run is told to stop, and recorded as interrupted
    site.release.set()
    async with Server(options) as second:
        run = second.store.get(job)  # type: ignore[union-attr]
        assert run is not None and (run.state, run.outcome) == ("ended", "interrupted")
        assert [j["id"] for j in (await api(second.url, "listjobs.json"))[1]["finished"]] == [job]


async def _start_cli_server(data: Path) -> tuple[asyncio.subprocess.Process, str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith(("SKITTER_", "SCRAPY_"))}
    proc = await asyncio.create_subprocess_exec(
        sys.executable, "-m", "skitter", "server", "--port", "0", "--data-dir", str(data),
        env={**env, "PYTHONPATH": SRC}, stderr=asyncio.subprocess.PIPE,
    )  # fmt: skip
    assert proc.stderr is not None
    seen = []
    while line := (await asyncio.wait_for(proc.stderr.readline(), 60)).decode():
        if line.startswith("skitter server: http://127.0.0.1:"):
            return proc, line.split()[2]
        seen.append(line)
    raise AssertionError(f"the server did not start: {seen}")


async def test_a_killed_service_shows_its_run_interrupted(tmp_path: Path, serve: Any) -> None:
    """kill -9 of the service mid-run: at its next start the run is interrupted."""
    site = HangingSite()
    base = await serve(site.app)
    proc, url = await _start_cli_server(tmp_path / "data")
    orphan = None
    try:
        await deploy_directory(url, make_project(tmp_path / "proj", url))
        job = await schedule(url, base)
        orphan = (await wait_for_job(url, job, "running"))["pid"]
    finally:
        proc.kill()
        await proc.wait()
        if orphan is not None:  # the run's process outlives a killed service: end it
            with contextlib.suppress(ProcessLookupError):
                os.kill(orphan, signal.SIGKILL)
    site.release.set()
    again, url = await _start_cli_server(tmp_path / "data")
    try:
        _, jobs = await api(url, "listjobs.json?project=shopbot")
        assert [j["id"] for j in jobs["finished"]] == [job] and jobs["running"] == []
        async with aiohttp.ClientSession() as session, session.get(f"{url}runs/{job}") as page:
            assert "interrupted" in await page.text()
    finally:
        again.send_signal(signal.SIGINT)
        assert await asyncio.wait_for(again.wait(), 30) == 0


async def test_directory_deploy_versions_and_deletion(tmp_path: Path, server: Server) -> None:
    project = make_project(tmp_path / "proj", server.url)
    await deploy_directory(server.url, project)
    form = {"project": "shopbot", "version": "v2", "directory": str(project)}
    assert (await api(server.url, "addversion.json", data=form))[1]["spiders"] == 1
    assert (await api(server.url, "listversions.json?project=shopbot"))[1]["versions"] == [
        "v1",
        "v2",
    ]
    form = {"project": "shopbot", "version": "v1"}
    assert (await api(server.url, "delversion.json", data=form))[1]["status"] == "ok"
    assert (await api(server.url, "listversions.json?project=shopbot"))[1]["versions"] == ["v2"]
    assert (await api(server.url, "delproject.json", data={"project": "shopbot"}))[0] == 200
    assert (await api(server.url, "listprojects.json"))[1]["projects"] == []


async def test_a_project_whose_spiders_cannot_load_is_refused(
    tmp_path: Path, server: Server
) -> None:
    project = make_project(tmp_path / "proj", server.url)
    (project / "shopbot" / "spiders" / "broken.py").write_text("import no_such_module\n")
    form = {"project": "shopbot", "version": "v1", "directory": str(project)}
    status, answer = await api(server.url, "addversion.json", data=form)
    assert status == 400 and "no_such_module" in answer["message"]
    assert (await api(server.url, "listprojects.json"))[1]["projects"] == []


async def test_basic_auth(tmp_path: Path, serve: Any) -> None:
    options = ServerOptions(tmp_path / "data", port=0, username="ops", password="s3cret-pass")
    async with Server(options) as server:
        status, _ = await api(server.url, "daemonstatus.json")
        assert status == 401
        wrong = {"Authorization": _basic("ops", "wrong")}
        assert (await api(server.url, "daemonstatus.json", headers=wrong))[0] == 401
        right = {"Authorization": _basic("ops", "s3cret-pass")}
        assert (await api(server.url, "daemonstatus.json", headers=right))[1]["status"] == "ok"
        # A browser page of another site cannot post, credentials or not.
        foreign = {**right, "Origin": "http://evil.example"}
        status, _ = await api(server.url, "delproject.json", data={"project": "x"}, headers=foreign)
        assert status == 403


def _basic(user: str, password: str) -> str:
    return "Basic " + base64.b64encode(f"{user}:{password}".encode()).decode()


def test_exposed_without_credentials_is_refused(tmp_path: Path) -> None:
    with pytest.raises(ConfigError, match="without authentication"):
        Server(ServerOptions(tmp_path / "data", host="0.0.0.0"))
    with pytest.raises(ConfigError, match="both --username and --password"):
        Server(ServerOptions(tmp_path / "data", username="ops"))


async def test_finished_run_items_match_the_site(
    tmp_path: Path, server: Server, serve: Any
) -> None:
    base = await serve(shop_site())
    await deploy_directory(server.url, make_project(tmp_path / "proj", server.url))
    job = await schedule(server.url, base, setting="DOWNLOAD_DELAY=0", jobid="first-run")
    assert job == "first-run"
    done = await wait_for_job(server.url, job)
    assert done["items_url"] == f"/items/shopbot/products/{job}.jl"
    status, answer = await api(server.url, "schedule.json", data={
        "project": "shopbot", "spider": "products", "jobid": "first-run"})  # fmt: skip
    assert status == 400 and "already taken" in answer["message"]
