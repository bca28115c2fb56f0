"""Workers at the edges of Redis, end to end: real ``skitter worker`` processes against a
real redis-server that runs out of memory, cannot persist, is a replica, refuses the
password or the ACL user; and a job's totals across runs, with and without
REDIS_PERSIST."""

from __future__ import annotations

import asyncio
import os
import sys
import textwrap
from collections.abc import AsyncIterator, Callable, Iterator
from pathlib import Path
from typing import Any

import pytest
from redis.asyncio import Redis
from test_workers import PAGES, SPIDER, SRC, Site, finish, items, start, until_said, worker

from skitter.redis import JobKeys
from skitter.testing import wait_until
from skitter.testing._redis import RedisServer, require_redis_server

PASSWORD = "s3cret-Passw0rd"


@pytest.fixture
def redis_server() -> Iterator[RedisServer]:
    with RedisServer(aof=True, binary=require_redis_server()) as server:
        yield server


@pytest.fixture
def spider_file(tmp_path: Path) -> Path:
    path = tmp_path / "tree.py"
    path.write_text(textwrap.dedent(SPIDER))
    return path


@pytest.fixture
async def admin(redis_server: RedisServer) -> AsyncIterator[Redis]:
    client = Redis.from_url(redis_server.url)
    yield client
    await client.aclose()


async def exits(proc: asyncio.subprocess.Process, within: float = 90) -> tuple[int, str]:
    """Its exit status and output, lines rejoined (the console wraps long messages)."""
    out, _ = await asyncio.wait_for(proc.communicate(), timeout=within)
    assert proc.returncode is not None
    return proc.returncode, " ".join(out.decode().split())


async def bgsave_status(admin: Redis, status: str) -> bool:
    """Whether Redis's last snapshot ended in ``status``: another process's state, polled."""
    return bool((await admin.info("persistence"))["rdb_last_bgsave_status"] == status)


async def out_of_memory(admin: Redis, server: RedisServer) -> Callable[[], Any]:
    await admin.config_set("maxmemory-policy", "noeviction")
    await admin.config_set("maxmemory", "1")
    return lambda: admin.config_set("maxmemory", "0")


async def cannot_persist(admin: Redis, server: RedisServer) -> Callable[[], Any]:
    """MISCONF: snapshots fail (``dump.rdb`` is a directory) and Redis stops writes."""
    blocker = server.directory / "dump.rdb"
    blocker.mkdir()
    await admin.config_set("save", "3600 1")
    await admin.config_set("stop-writes-on-bgsave-error", "yes")
    await admin.bgsave()
    await wait_until(lambda: bgsave_status(admin, "err"))

    async def lift() -> None:
        blocker.rmdir()
        await admin.bgsave()

    return lift


@pytest.mark.parametrize("make_state", [out_of_memory, cannot_persist], ids=["OOM", "MISCONF"])
async def test_a_redis_that_refuses_writes_mid_crawl_pauses_the_workers_and_they_finish(
    serve: Any,
    tmp_path: Path,
    redis_server: RedisServer,
    admin: Redis,
    spider_file: Path,
    make_state: Any,
) -> None:
    site = Site(latency=0.1)  # about 4 s of crawling
    base = await serve(site.app)
    outs = [tmp_path / f"w{i}.jsonl" for i in range(2)]
    procs = [await start(worker(spider_file, redis_server.url, out, base)) for out in outs]
    # Stop the writes while pages are still yielding links (only pages below PAGES / 2
    # do): from a count of pages served, not after a fixed time, which a fast or a
    # loaded machine would make too late or too early.
    await wait_until(lambda: len(site.served) >= 10, timeout=30)
    lift = await make_state(admin, redis_server)
    assert max(n for _, n in site.served) < PAGES // 2, "links are still being pushed"
    assert all(proc.returncode is None for proc in procs)
    said = await until_said(procs, "Task store unavailable")  # a worker met the refusal
    await lift()
    texts = [head + await finish(proc) for head, proc in zip(said, procs, strict=True)]
    assert set(items(outs)) == set(range(PAGES))  # exit 0: the crawl completed
    assert not any("Traceback" in text for text in texts), texts


async def test_workers_pointed_at_a_replica_wait_until_it_is_promoted(
    serve: Any, tmp_path: Path, redis_server: RedisServer, admin: Redis, spider_file: Path
) -> None:
    """READONLY: every write is refused, from the worker's first one; none crashes."""
    site = Site()
    base = await serve(site.app)
    with RedisServer(binary=require_redis_server()) as master:
        await admin.replicaof("127.0.0.1", str(master.port))
        outs = [tmp_path / f"w{i}.jsonl" for i in range(2)]
        procs = [await start(worker(spider_file, redis_server.url, out, base)) for out in outs]
        said = await until_said(procs, "read-only replica (READONLY)")  # a first write refused
        assert all(proc.returncode is None for proc in procs), "they wait"
        assert site.served == []
        await admin.replicaof("NO", "ONE")  # promoted: it takes writes now
        texts = [head + await finish(proc) for head, proc in zip(said, procs, strict=True)]
    assert set(items(outs)) == set(range(PAGES))
    assert not any("Traceback" in text for text in texts), texts


async def test_a_store_refusing_writes_longer_than_the_outage_timeout_fails_the_worker(
    serve: Any,
    tmp_path: Path,
    redis_server: RedisServer,
    admin: Redis,
    spider_file: Path,
) -> None:
    site = Site(latency=0.1)
    base = await serve(site.app)
    out = tmp_path / "w.jsonl"
    proc = await start(
        worker(spider_file, redis_server.url, out, base, "FRONTIER_OUTAGE_TIMEOUT=3")
    )
    await wait_until(lambda: site.served, timeout=60)  # the job exists and the worker crawls
    await out_of_memory(admin, redis_server)  # leases still work; nothing can be pushed
    code, text = await exits(proc, within=30)  # after the 3 s outage, not a hang
    assert code == 1, text
    assert "unavailable for" in text and "FRONTIER_OUTAGE_TIMEOUT is 3 s" in text
    assert "out of memory" in text
    assert len(set(items([out]))) < PAGES


# -- credentials ------------------------------------------------------------------------------
@pytest.fixture
def locked() -> Iterator[RedisServer]:
    with RedisServer(binary=require_redis_server(), password=PASSWORD) as server:
        yield server


def with_userinfo(server: RedisServer, userinfo: str) -> str:
    return server.url.replace("redis://", f"redis://{userinfo}@")


async def command(*args: str, env: dict[str, str] | None = None) -> tuple[int, str]:
    proc = await asyncio.create_subprocess_exec(
        sys.executable, "-m", "skitter", *args,
        env={**os.environ, "PYTHONPATH": SRC, **(env or {})},
        stdout=asyncio.subprocess.PIPE, stderr=asyncio.subprocess.STDOUT,
    )  # fmt: skip
    return await exits(proc, within=60)


@pytest.mark.parametrize(
    ("userinfo", "meaning"),
    [
        (":wrong-password", "refused the credentials"),
        ("", "refused the connection: it needs credentials"),
    ],
)
async def test_wrong_credentials_stop_worker_push_and_dashboard_at_start(
    tmp_path: Path, locked: RedisServer, spider_file: Path, userinfo: str, meaning: str
) -> None:
    url = with_userinfo(locked, userinfo) if userinfo else locked.url
    shown = url.replace("wrong-password", "***")
    job = ("--job", "test")
    runs = {
        "worker": ("worker", str(spider_file), "--redis", url, *job, "--no-progress"),
        "push": ("push", "http://127.0.0.1:1/x", "--redis", url, *job, "--spider", "tree"),
        "dashboard": ("dashboard", "--redis", url),
    }
    for name, args in runs.items():
        async with asyncio.timeout(20):  # at once, not after an outage timeout
            code, text = await command(*args)
        assert code == 2, (name, text)
        assert f"Redis at {shown} {meaning}" in text, (name, text)
        assert "wrong-password" not in text
        assert "Traceback" not in text, (name, text)


async def test_an_acl_user_without_rights_on_the_job_stops_the_worker_at_start(
    tmp_path: Path, locked: RedisServer, spider_file: Path
) -> None:
    admin = Redis.from_url(with_userinfo(locked, f":{PASSWORD}"))
    await admin.acl_setuser(
        "reader", enabled=True, passwords=["+reader-pw"], keys=["%R~*"], commands=["+@all"]
    )
    await admin.aclose()
    url = with_userinfo(locked, "reader:reader-pw")
    out = tmp_path / "w.jsonl"
    code, text = await command("worker", str(spider_file), "--redis", url, "--job", "test",
                               "-o", str(out), "--no-progress")  # fmt: skip
    assert code == 2, text
    assert "Redis at redis://reader:***@127.0.0.1" in text
    assert "refused access: the ACL user lacks the rights (NOPERM)" in text
    assert "reader-pw" not in text
    assert not out.exists()  # stopped before anything was opened


async def test_the_url_may_come_from_the_environment_and_is_needed_from_somewhere(
    serve: Any, tmp_path: Path, locked: RedisServer, spider_file: Path
) -> None:
    url = with_userinfo(locked, f":{PASSWORD}")
    site = Site()
    base = await serve(site.app)
    env = {"SKITTER_REDIS_URL": url}
    code, text = await command(
        "push", f"{base}/p/1", "--job", "test", "--spider", "tree", "--create", env=env
    )
    assert (code, "1 queued for job 'test'" in text) == (0, True), text
    out = tmp_path / "w.jsonl"
    code, text = await command(
        "worker", str(spider_file), "--job", "test", "-o", str(out), "--no-progress",
        "-s", "WORKER_IDLE_TIMEOUT=1", "-s", "STATS_DUMP=false", env=env,
    )  # fmt: skip
    assert code == 0, text
    assert 1 in set(items([out])) and 0 not in set(items([out]))  # the pushed subtree
    assert PASSWORD not in text
    for name, args in {
        "worker": ("worker", str(spider_file), "--job", "test"),
        "push": ("push", f"{base}/p/1", "--job", "test", "--spider", "tree"),
        "dashboard": ("dashboard",),
    }.items():
        code, text = await command(*args, env={"SKITTER_REDIS_URL": ""})
        assert code == 2, (name, text)
        assert f"skitter {name} needs a Redis: pass --redis URL or set $SKITTER_REDIS_URL" in text
    code, text = await command("push", "http://x.example/", "--redis", "localhost:6379",
                               "--job", "test", "--spider", "tree")  # fmt: skip
    assert code == 2 and "is not a Redis URL" in text and "Traceback" not in text, text


# -- a job's totals across runs ---------------------------------------------------------------
async def stats_keys(url: str, project: str = "tree") -> list[bytes]:
    client = Redis.from_url(url)
    try:
        return sorted(await client.keys(f"{JobKeys.for_job(project, 'test').tag}:stats*"))
    finally:
        await client.aclose()


async def totals(url: str) -> dict[str, Any]:
    from skitter.cluster import RedisStats
    from skitter.engine import Stats

    client = Redis.from_url(url)
    try:
        return await RedisStats(client, JobKeys.for_job("tree", "test"), Stats()).totals()
    finally:
        await client.aclose()


async def test_without_persistence_the_last_worker_out_deletes_the_totals_too(
    serve: Any, tmp_path: Path, redis_server: RedisServer, spider_file: Path
) -> None:
    site = Site()
    base = await serve(site.app)
    for run in range(2):
        out = tmp_path / f"run{run}.jsonl"
        await finish(await start(worker(spider_file, redis_server.url, out, base,
                                        "REDIS_PERSIST=false")))  # fmt: skip
        assert sorted(items([out])) == list(range(PAGES))  # each run crawls it all again
        assert await stats_keys(redis_server.url) == []  # and leaves no totals behind


async def test_with_persistence_the_totals_count_what_the_job_did_over_its_runs(
    serve: Any, tmp_path: Path, redis_server: RedisServer, spider_file: Path
) -> None:
    site = Site()
    base = await serve(site.app)
    runs = [(), (), ("REDIS_FLUSH_ON_START=true",)]
    seen = []
    for run, extra in enumerate(runs):
        out = tmp_path / f"run{run}.jsonl"
        await finish(await start(worker(spider_file, redis_server.url, out, base, *extra)))
        seen.append(len(items([out])))
        job = await totals(redis_server.url)
        assert job["item_scraped_count"] == PAGES, (run, job)
        assert job["response_received_count"] == PAGES
    # the second run found nothing left to do and added nothing; the third started the
    # job afresh (REDIS_FLUSH_ON_START) and its totals with it
    assert seen == [PAGES, 0, PAGES]


@pytest.mark.parametrize("fresh", ["REDIS_FLUSH_ON_START=true", "REDIS_PERSIST=false"])
async def test_a_job_started_afresh_reads_robots_txt_afresh(
    serve: Any, tmp_path: Path, redis_server: RedisServer, spider_file: Path, fresh: str
) -> None:
    """robots.txt is cached in Redis for the whole cluster (a day); a job flushed on
    start, or cleared by its last worker, must not keep the last run's rules."""
    from aiohttp import web

    site = Site()
    rules = {"text": "User-agent: *\nDisallow: /p/1\n"}  # /p/1, /p/10..: half the tree
    fetched: list[str] = []

    async def robots(request: web.Request) -> web.Response:
        fetched.append(rules["text"])
        return web.Response(text=rules["text"])

    site.app.router.add_get("/robots.txt", robots)
    base = await serve(site.app)
    obey = "ROBOTSTXT_OBEY=true"
    first = tmp_path / "first.jsonl"
    persist = "REDIS_PERSIST=false" if fresh == "REDIS_PERSIST=false" else "REDIS_PERSIST=true"
    await finish(await start(worker(spider_file, redis_server.url, first, base, obey, persist)))
    assert 0 < len(items([first])) < PAGES // 2
    rules["text"] = "User-agent: *\nDisallow:\n"  # the site now allows everything
    second = tmp_path / "second.jsonl"
    await finish(await start(worker(spider_file, redis_server.url, second, base, obey, fresh)))
    assert len(fetched) == 2  # read again, once
    assert sorted(items([second])) == list(range(PAGES))
