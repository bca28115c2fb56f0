"""``skitter server --redis``: runs dispatched to agents on other machines, for real.

A redis-server on a free port, the service and two ``skitter agent`` processes (each
in its own process group, as on a machine of its own), and a local site: a run
scheduled through ``schedule.json`` is crawled by both agents' workers, its items reach
the service exactly once, and it ends finished in ``listjobs.json``; an agent killed
mid-run (its whole process group, as a machine that dies) loses no task: the other
agent's workers take its leased tasks over once their leases expire.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import os
import re
import signal
import sys
from collections.abc import AsyncIterator, Iterator
from pathlib import Path
from typing import Any

import pytest
from aiohttp import web
from redis.asyncio import Redis

from skitter.testing import wait_until
from skitter.testing._redis import RedisServer, require_redis_server

from .conftest import SRC, api, deploy_directory, make_project, wait_for_job

pytestmark = [pytest.mark.subprocess, pytest.mark.slow]

PAGES = 60
PASSWORD = "redis-pw-3f9c"  # the Redis's: found nowhere but in the environment

TREE = """
import skitter


class TreeSpider(skitter.Spider):
    name = "tree"
    custom_settings = {
        "ROBOTSTXT_OBEY": False, "DOWNLOAD_DELAY": 0, "CONCURRENT_REQUESTS": 2,
        "CONCURRENT_REQUESTS_PER_DOMAIN": 8,
    }

    def __init__(self, base="", **kwargs):
        super().__init__(**kwargs)
        self.base = base

    def start_requests(self):
        yield skitter.Request(self.base + "/p/0")

    def parse(self, response):
        n = int(response.url.rsplit("/", 1)[1])
        yield {"n": n}
        for m in (2 * n + 1, 2 * n + 2):
            if m < PAGES:
                yield response.follow(f"/p/{m}")
""".replace("PAGES", str(PAGES))


def tree_site(latency: float) -> web.Application:
    async def page(request: web.Request) -> web.Response:
        await asyncio.sleep(latency)  # the site's own pace, so that a crawl takes a while
        return web.Response(text="<html>ok</html>", content_type="text/html")

    app = web.Application()
    app.router.add_get("/p/{n}", page)
    return app


@pytest.fixture
def redis_server() -> Iterator[RedisServer]:
    with RedisServer(binary=require_redis_server(), password=PASSWORD) as server:
        yield server


def _env(redis_url: str) -> dict[str, str]:
    """The Redis URL in the environment: a password on a command line is anyone's."""
    env = {k: v for k, v in os.environ.items() if not k.startswith(("SKITTER_", "SCRAPY_"))}
    return {**env, "PYTHONPATH": SRC, "SKITTER_REDIS_URL": redis_url}


async def _start(
    redis_url: str, output: list[str], *args: str, ready: str
) -> tuple[asyncio.subprocess.Process, str]:
    """A ``python -m skitter`` process in a session of its own (a machine of its own:
    killing its group kills what it started), and the line starting with ``ready``."""
    proc = await asyncio.create_subprocess_exec(
        sys.executable, "-m", "skitter", *args, env=_env(redis_url), start_new_session=True,
        stdout=asyncio.subprocess.DEVNULL, stderr=asyncio.subprocess.PIPE,
    )  # fmt: skip
    assert proc.stderr is not None
    seen = []
    while line := (await asyncio.wait_for(proc.stderr.readline(), 60)).decode():
        seen.append(line)
        if line.startswith(ready):
            output.extend(seen)
            asyncio.get_running_loop().create_task(_drain(proc.stderr, output))
            return proc, line
    raise AssertionError(f"skitter {args[0]} did not start: {''.join(seen)}")


async def _drain(stream: asyncio.StreamReader, output: list[str]) -> None:
    while line := await stream.readline():
        output.append(line.decode(errors="replace"))


def _kill_group(proc: asyncio.subprocess.Process) -> None:
    with contextlib.suppress(ProcessLookupError):
        os.killpg(proc.pid, signal.SIGKILL)


class Cluster:
    """The service (``url``) and its agents, all killed at the end of the test."""

    def __init__(self, redis_url: str, root: Path) -> None:
        self.redis_url = redis_url
        self.root = root
        self.url = ""
        self.procs: dict[str, asyncio.subprocess.Process] = {}
        self.output: list[str] = []  # what the service and the agents printed

    async def start_service(self) -> None:
        proc, line = await _start(
            self.redis_url, self.output,
            "server", "--port", "0", "--data-dir", str(self.root / "data"),
            "--redis", "--agent-timeout", "3",
            ready="skitter server: http://127.0.0.1:",
        )  # fmt: skip
        self.procs["service"], self.url = proc, line.split()[2]

    async def add_agent(self, name: str) -> None:
        self.procs[name], _ = await _start(
            self.redis_url, self.output, "agent", "--dir", str(self.root / name), "--name", name,
            ready=f"skitter agent {name}",
        )  # fmt: skip

    async def close(self) -> None:
        for proc in self.procs.values():
            _kill_group(proc)
            await proc.wait()


@pytest.fixture
async def cluster(tmp_path: Path, redis_server: RedisServer) -> AsyncIterator[Cluster]:
    url = redis_server.url.replace("redis://", f"redis://:{PASSWORD}@")
    cluster = Cluster(url, tmp_path)
    try:
        await cluster.start_service()
        for name in ("a1", "a2"):
            await cluster.add_agent(name)
        yield cluster
    finally:
        await cluster.close()


async def _schedule(cluster: Cluster, tmp_path: Path, base: str) -> str:
    project = make_project(tmp_path / "proj", cluster.url)
    (project / "shopbot" / "spiders" / "tree.py").write_text(TREE)
    await deploy_directory(cluster.url, project)
    form = {
        "project": "shopbot", "spider": "tree", "base": base,
        "setting": ["LEASE_SECONDS=3", "WORKER_IDLE_TIMEOUT=2"],
    }  # fmt: skip
    data = [(k, v) for k, vs in form.items() for v in ([vs] if isinstance(vs, str) else vs)]
    status, answer = await api(cluster.url, "schedule.json", data=data)
    assert (status, answer["status"]) == (200, "ok"), answer
    return str(answer["jobid"])


async def _everything_in(url: str) -> bytes:
    """Every key and value in the Redis, as one blob to search."""
    client = Redis.from_url(url)
    try:
        blob = []
        async for key in client.scan_iter():
            blob.append(repr((key, await _value(client, key))).encode())
        return b"\n".join(blob)
    finally:
        await client.aclose()


async def _value(client: Redis, key: bytes) -> Any:
    kind = await client.type(key)
    kind = kind.decode() if isinstance(kind, bytes) else kind
    if kind == "string":
        return await client.get(key)
    if kind == "hash":
        return await client.hgetall(key)
    if kind == "set":
        return await client.smembers(key)
    if kind == "list":
        return await client.lrange(key, 0, -1)
    if kind == "stream":
        return await client.xrange(key)
    return await client.zrange(key, 0, -1)


async def _items(url: str, job: str, *, yet: bool = True) -> list[int]:
    """The run's items on the service (``yet=False``: none is fine, the run is young)."""
    status, text = await api(url, f"items/shopbot/tree/{job}.jl")
    if status == 404 and not yet:
        return []
    assert status == 200, text
    return [json.loads(line)["n"] for line in str(text).splitlines() if line]


async def _run_page(url: str, job: str) -> str:
    status, text = await api(url, f"runs/{job}")
    assert status == 200
    return str(text)


async def test_two_agents_crawl_a_run_scheduled_on_the_service(
    tmp_path: Path, serve: Any, cluster: Cluster
) -> None:
    base = await serve(tree_site(latency=0.2))
    job = await _schedule(cluster, tmp_path, base)
    await wait_for_job(cluster.url, job, "running")
    assert PASSWORD.encode() not in await _everything_in(cluster.redis_url)
    await wait_for_job(cluster.url, job, "finished")
    assert sorted(await _items(cluster.url, job)) == list(range(PAGES))  # each exactly once
    page = await _run_page(cluster.url, job)
    assert "finished" in page and f"tree:{job}" in page
    for agent in ("a1", "a2"):  # both machines crawled
        found = re.search(rf"<td>agent/{agent}/item_scraped_count</td><td>(\d+)</td>", page)
        assert found is not None and int(found[1]) > 0, page
    totals = re.search(r"<td>item_scraped_count</td><td>(\d+)</td>", page)  # the cluster's
    assert totals is not None and int(totals[1]) == PAGES
    _, logtext = await api(cluster.url, f"logs/shopbot/tree/{job}.log")
    assert "[a1 worker 1]" in logtext and "[a2 worker 1]" in logtext
    assert PASSWORD not in logtext and PASSWORD not in "".join(cluster.output)
    assert ":***@127.0.0.1" in logtext  # the workers said where they crawl, masked


async def test_an_agent_killed_mid_run_loses_no_task(
    tmp_path: Path, serve: Any, cluster: Cluster
) -> None:
    base = await serve(tree_site(latency=0.3))
    job = await _schedule(cluster, tmp_path, base)
    await wait_for_job(cluster.url, job, "running")

    async def some_items_in() -> bool:  # mid-run: some items in, most not
        return len(await _items(cluster.url, job, yet=False)) >= 5

    await wait_until(some_items_in, timeout=60)
    _kill_group(cluster.procs["a1"])  # the agent and its workers, as a machine that dies
    await wait_for_job(cluster.url, job, "finished")
    assert sorted(await _items(cluster.url, job)) == list(range(PAGES))
    assert "finished" in await _run_page(cluster.url, job)


async def test_cancel_stops_the_workers_everywhere(
    tmp_path: Path, serve: Any, cluster: Cluster
) -> None:
    release, asked = asyncio.Event(), asyncio.Event()
    job = await _schedule(cluster, tmp_path, await serve(hanging_site(release, asked)))
    await asyncio.wait_for(asked.wait(), 60)  # a worker is downloading
    form = {"project": "shopbot", "job": job}
    status, answer = await api(cluster.url, "cancel.json", data=form)
    assert (status, answer["prevstate"]) == (200, "running")

    async def stopping() -> bool:  # the service sees an agent stopping its workers...
        return "<td>stopping</td>" in await _run_page(cluster.url, job)

    await wait_until(stopping, timeout=60)
    _, jobs = await api(cluster.url, "listjobs.json")  # ...and waits for them to exit
    assert job in [entry["id"] for entry in jobs["running"]], jobs
    release.set()  # the workers' downloads in flight end; the workers stop
    await wait_for_job(cluster.url, job, "finished")
    page = await _run_page(cluster.url, job)
    assert "cancelled" in page
    _, logtext = await api(cluster.url, f"logs/shopbot/tree/{job}.log")
    assert "finish_reason" in logtext  # the workers' last words reached the run's log
    assert len(await _items(cluster.url, job, yet=False)) < PAGES


async def test_a_secret_setting_is_not_sent_through_redis(tmp_path: Path, cluster: Cluster) -> None:
    project = make_project(tmp_path / "proj", cluster.url)
    await deploy_directory(cluster.url, project)
    form = {"project": "shopbot", "spider": "products", "setting": "HTTPPROXY_PASSWORD=x"}
    status, answer = await api(cluster.url, "schedule.json", data=form)
    assert status == 400 and "HTTPPROXY_PASSWORD" in answer["message"], answer


def hanging_site(release: asyncio.Event, asked: asyncio.Event | None = None) -> web.Application:
    """Pages that answer only once ``release`` is set: a run that stays running
    (``asked`` is set at the first request: a worker is crawling)."""

    async def hang(request: web.Request) -> web.Response:
        if asked is not None:
            asked.set()
        await release.wait()
        return web.Response(text="<html>ok</html>", content_type="text/html")

    site = web.Application()
    site.router.add_get("/p/{n}", hang)
    return site


async def test_a_killed_service_shows_the_run_interrupted_and_the_agents_stop_it(
    tmp_path: Path, serve: Any, cluster: Cluster
) -> None:
    release = asyncio.Event()
    job = await _schedule(cluster, tmp_path, await serve(hanging_site(release)))
    await wait_for_job(cluster.url, job, "running")
    _kill_group(cluster.procs["service"])
    await cluster.procs["service"].wait()
    await cluster.start_service()  # the same data directory and Redis
    _, jobs = await api(cluster.url, "listjobs.json")
    assert [j["id"] for j in jobs["finished"]] == [job] and jobs["running"] == []
    assert "interrupted" in await _run_page(cluster.url, job)
    release.set()  # the downloads in flight end, and the workers with them
    client = Redis.from_url(cluster.redis_url)
    try:
        assert await client.hlen("skitter:server:runs") == 0

        async def stopped() -> bool:  # each agent saw the run go and stopped its workers
            reports = await client.hgetall(f"skitter:server:run:{job}:agents")
            return bool(reports) and {json.loads(r)["state"] for r in reports.values()} == {
                "stopped"
            }

        await wait_until(stopped, timeout=60)
    finally:
        await client.aclose()


async def test_an_agent_refused_by_redis_says_so_without_the_password(
    tmp_path: Path, redis_server: RedisServer
) -> None:
    wrong = redis_server.url.replace("redis://", "redis://:not-the-pw-7a1@")
    proc = await asyncio.create_subprocess_exec(
        sys.executable, "-m", "skitter", "agent", "--dir", str(tmp_path / "a"),
        env=_env(wrong), stdout=asyncio.subprocess.PIPE, stderr=asyncio.subprocess.STDOUT,
    )  # fmt: skip
    out, _ = await asyncio.wait_for(proc.communicate(), 60)
    text = out.decode()
    assert proc.returncode == 2, text
    assert "refused the credentials" in text and ":***@127.0.0.1" in text
    assert "not-the-pw-7a1" not in text
