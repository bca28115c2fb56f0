"""``skitter job --redis URL --job NAME`` (status, failed and bad tasks, --retry-failed,
--requeue-bad), ``skitter job DIR --requeue-bad``, and ``skitter push`` refusing a job
that does not exist unless ``--create``: the real command, against a real redis-server."""

from __future__ import annotations

import asyncio
import os
import sqlite3
import sys
from collections.abc import AsyncIterator, Iterator
from pathlib import Path
from typing import Any

import pytest
from redis.asyncio import Redis

from skitter.frontier import FrontierCounts, RedisFrontier, SqliteFrontier, TaskState
from skitter.http import Request
from skitter.testing._redis import RedisServer, require_redis_server

SRC = str(Path(__file__).resolve().parents[2] / "src")
T0 = 1_700_000_000.0


@pytest.fixture(scope="module")
def server() -> Iterator[RedisServer]:
    with RedisServer(binary=require_redis_server()) as server:
        yield server


@pytest.fixture
def url(server: RedisServer) -> str:
    server.flushall()
    return server.url


async def skitter(*args: str) -> tuple[int, str]:
    proc = await asyncio.create_subprocess_exec(
        sys.executable, "-m", "skitter", *args, env={**os.environ, "PYTHONPATH": SRC},
        stdout=asyncio.subprocess.PIPE, stderr=asyncio.subprocess.STDOUT,
    )  # fmt: skip
    out, _ = await asyncio.wait_for(proc.communicate(), timeout=60)
    assert proc.returncode is not None
    return proc.returncode, " ".join(out.decode().split())  # rich wraps long lines


@pytest.fixture
async def job(url: str) -> AsyncIterator[RedisFrontier]:
    """Job 'nightly' of spider 'tree': one task queued, one FAILED, one BAD."""
    frontier = RedisFrontier(url, project="tree", job="nightly", kind="fifo")
    await frontier.push(
        [Request(f"http://{host}.example/{path}") for host, path in (("a", 1), ("b", 2), ("c", 3))],
        T0,
    )
    failed, bad = await frontier.lease(2, T0, 30)
    await frontier.nack(failed, T0 + 1, None, "HTTP 500")
    await frontier.mark_bad(bad, T0 + 2, "UnknownCallback: callback 'parse_old' is gone")
    yield frontier
    await frontier.close()


async def test_job_shows_a_redis_jobs_counts_and_its_failed_and_bad_tasks(
    url: str, job: RedisFrontier
) -> None:
    code, text = await skitter("job", "--redis", url, "--job", "nightly")
    assert code == 0, text
    assert "Job 'nightly' of spider 'tree'" in text and job.epoch in text
    assert "Failed tasks" in text and "http://a.example/1" in text and "HTTP 500" in text
    assert "Bad tasks" in text and "http://b.example/2" in text and "parse_old" in text
    assert "waiting (due) │ 1" in text


async def test_job_requeues_a_redis_jobs_bad_and_failed_tasks_by_filter(
    url: str, job: RedisFrontier
) -> None:
    base = ["job", "--redis", url, "--job", "nightly", "--spider", "tree"]
    code, text = await skitter(*base, "--requeue-bad", "--reason", "nothing like it")
    assert (code, "0 bad tasks queued again" in text) == (0, True), text
    code, text = await skitter(*base, "--requeue-bad", "--reason", "parse_old")
    assert "1 bad tasks queued again" in text, text
    code, text = await skitter(*base, "--retry-failed", "--domain", "a.example")
    assert "1 failed tasks queued again" in text, text
    assert await job.tasks(TaskState.BAD) == [] and await job.tasks(TaskState.FAILED) == []
    assert await job.counts(T0) == FrontierCounts(3, 0, 0)
    assert job.kind == "fifo"  # the command took the job's own kind


async def test_job_refuses_what_it_cannot_do(url: str, job: RedisFrontier, tmp_path: Path) -> None:
    code, text = await skitter("job", "--redis", url, "--job", "missing", "--spider", "tree")
    assert code == 1 and "no job 'missing' for spider 'tree' on redis://127.0.0.1:" in text, text
    code, text = await skitter("job", "--redis", url, "--job", "missing")
    assert code == 2 and "no job 'missing' in Redis" in text, text
    code, text = await skitter("job", "--redis", url, "--job", "nightly", "--domain", "a.example")
    assert code == 2 and "--retry-failed or --requeue-bad" in text, text
    code, text = await skitter("job", str(tmp_path), "--redis", url, "--job", "nightly")
    assert code == 2 and "not both" in text, text
    code, text = await skitter("job", "--job", "nightly")  # no --redis, no $SKITTER_REDIS_URL
    assert code == 2 and "needs a Redis: pass --redis URL or set $SKITTER_REDIS_URL" in text, text
    code, text = await skitter("job")
    assert code == 2 and "--redis URL and --job NAME" in text, text


async def test_push_to_a_job_that_does_not_exist_is_refused_unless_created(
    url: str, job: RedisFrontier
) -> None:
    client = Redis.from_url(url)
    try:
        before = sorted(await client.keys("*"))
        push = ["push", "http://example.com/", "--redis", url, "--spider", "tree", "--job"]
        code, text = await skitter(*push, "new")
        assert code == 2, text
        assert "no job 'new' for spider 'tree' on redis://127.0.0.1:" in text
        assert "start a worker first, or pass --create" in text
        assert sorted(await client.keys("*")) == before, "nothing created"
        code, text = await skitter(*push, "new", "--create")
        assert code == 0 and "Created job 'new'" in text and "1 queued" in text, text
        code, text = await skitter(*push, "nightly")  # it exists (and is a fifo job)
        assert code == 0 and "1 queued" in text and "Created" not in text, text
    finally:
        await client.aclose()


class Spider:
    def parse(self, response: Any) -> None: ...

    def parse_item(self, response: Any) -> None: ...


class Renamed:
    def parse(self, response: Any) -> None: ...


async def test_job_dir_requeues_bad_tasks_once_the_code_is_fixed(tmp_path: Path) -> None:
    job = tmp_path / "job"
    job.mkdir()
    db = job / "job.sqlite3"
    spider = Spider()
    frontier = SqliteFrontier(db, spider=spider)
    await frontier.push([Request("http://example.com/item", callback=spider.parse_item)], T0)
    await frontier.close()
    renamed = SqliteFrontier(db, spider=Renamed())
    assert (await renamed.load()).undecodable == 1  # its callback is gone: BAD
    await renamed.close()
    code, text = await skitter("job", str(job))
    assert code == 0 and "Bad tasks" in text and "parse_item" in text, text
    code, text = await skitter("job", str(job), "--requeue-bad", "--reason", "parse_item")
    assert code == 0 and "1 bad tasks queued again" in text, text
    with sqlite3.connect(db) as database:
        assert database.execute("SELECT state FROM tasks").fetchall() == [(1,)]
    fixed_spider = Spider()
    fixed = SqliteFrontier(db, spider=fixed_spider)
    assert (await fixed.load()).undecodable == 0
    (lease,) = await fixed.lease(1, T0, 30)
    assert lease.request.callback == fixed_spider.parse_item
    await fixed.close()
