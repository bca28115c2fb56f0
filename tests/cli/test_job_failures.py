"""Job directories when storage fails, end to end: a crawl whose feed fills the disk
exits non-zero and the same command, once there is room, finishes with every item; a
job that cannot be read back is refused in one line, before anything is fetched. The
commands run as real subprocesses against a local server."""

from __future__ import annotations

import asyncio
import json
import os
import re
import sqlite3
import sys
import textwrap
from pathlib import Path
from typing import Any

import pytest
from aiohttp import web

SRC = str(Path(__file__).resolve().parents[2] / "src")
PAGES = 200
CONCURRENCY = 4

# DISK_LIMIT: the feed's disk is full beyond that many bytes (unset: room again).
SPIDER = """
import contextlib
import os
import re

from skitter import Request, Spider
from skitter.testing import FullDisk

_disk = contextlib.ExitStack()
if os.environ.get("DISK_LIMIT"):
    _disk.enter_context(FullDisk(int(os.environ["DISK_LIMIT"])).feeds())


class Tree(Spider):
    name = "tree"

    def start_requests(self):
        yield Request(self.settings["BASE"] + "/p/0")

    def parse(self, response):
        n = int(response.url.rsplit("/", 1)[1])
        yield {"n": n, "name": f"page {n}"}
        for m in (2 * n + 1, 2 * n + 2):
            if m < PAGES:
                yield response.follow(f"/p/{m}")
""".replace("PAGES", str(PAGES))


def tree_site(hits: list[int]) -> web.Application:
    async def page(request: web.Request) -> web.Response:
        # the site's own pace, so that the crawl is under way when it fails
        await asyncio.sleep(0.01)
        hits.append(int(request.match_info["n"]))
        return web.Response(text="<html>ok</html>", content_type="text/html")

    app = web.Application()
    app.router.add_get("/p/{n}", page)
    return app


async def run(*args: str, env: dict[str, str] | None = None) -> tuple[int, str]:
    proc = await asyncio.create_subprocess_exec(
        sys.executable, "-m", "skitter", *args,
        env={**os.environ, "PYTHONPATH": SRC, **(env or {})},
        stdout=asyncio.subprocess.PIPE, stderr=asyncio.subprocess.STDOUT,
    )  # fmt: skip
    out, _ = await asyncio.wait_for(proc.communicate(), timeout=60)
    assert proc.returncode is not None
    return proc.returncode, out.decode()


def crawl_args(tmp_path: Path, base: str, *extra: str) -> list[str]:
    return [
        "crawl", str(tmp_path / "tree.py"), "-s", f"BASE={base}",
        "-s", f"CONCURRENT_REQUESTS={CONCURRENCY}", "--job-dir", str(tmp_path / "job"),
        "-o", str(tmp_path / "items.jsonl"), "--no-progress", *extra,
    ]  # fmt: skip


def items(tmp_path: Path) -> list[int]:
    lines = (tmp_path / "items.jsonl").read_text().splitlines()
    return [json.loads(line)["n"] for line in lines]  # every line whole


async def test_a_full_disk_stops_the_crawl_and_the_resume_loses_no_item(
    serve: Any, tmp_path: Path
) -> None:
    (tmp_path / "tree.py").write_text(textwrap.dedent(SPIDER))
    hits: list[int] = []
    base = await serve(tree_site(hits))
    code, out = await run(*crawl_args(tmp_path, base), env={"DISK_LIMIT": "2000"})
    assert code == 1, out
    feed = tmp_path / "items.jsonl"
    assert (
        f"error: crawl of spider 'tree' failed: feed '{feed}': cannot write: [Errno 28] No "
        "space left on device" in " ".join(out.split())
    ), out
    assert "Traceback" not in out
    first = items(tmp_path)
    assert 0 < len(first) < PAGES
    assert len(hits) < PAGES  # it stopped
    with sqlite3.connect(tmp_path / "job" / "job.sqlite3") as db:
        (meta,) = db.execute("SELECT value FROM meta WHERE key = 'feeds'").fetchone()
    assert json.loads(meta)[str(feed)] <= feed.stat().st_size  # never past what it holds
    # Room again: the same command goes on and ends with every item.
    stats_path = tmp_path / "stats.json"
    code, out = await run(*crawl_args(tmp_path, base, "--stats-json", str(stats_path)))
    assert code == 0, out
    assert "resuming" in out
    got = items(tmp_path)
    assert sorted(set(got)) == list(range(PAGES))  # no item lost
    # At least once: an item is written twice only if its task was mid-callback at the
    # last checkpoint before the failure (it runs again); at most one item (each page
    # yields one) per task in flight.
    assert len(got) - len(set(got)) <= CONCURRENCY
    assert json.loads(stats_path.read_text())["item_scraped_count"] == len(got)


async def make_job(serve: Any, tmp_path: Path) -> str:
    """A finished job of the tree spider; the base URL of its site."""
    (tmp_path / "tree.py").write_text(textwrap.dedent(SPIDER))
    base = await serve(tree_site([]))
    code, out = await run(*crawl_args(tmp_path, base, "-s", "CLOSESPIDER_PAGECOUNT=50"))
    assert code == 0, out
    return base


def damage(db: Path, how: str) -> None:
    assert not Path(f"{db}-wal").exists()  # the job is all in the main file
    if how == "empty":
        db.write_bytes(b"")
    elif how == "truncated":
        db.write_bytes(db.read_bytes()[: db.stat().st_size // 2])
    elif how == "garbled":
        data = bytearray(db.read_bytes())
        data[4096 * 3 : 4096 * 4] = os.urandom(4096)
        db.write_bytes(bytes(data))
    else:
        with sqlite3.connect(db) as conn:
            conn.execute(how)


@pytest.mark.parametrize(
    ("how", "message"),
    [
        ("empty", r"job DB is empty \(0 bytes\), which a crawl never writes"),
        ("truncated", "is not a usable job database"),
        ("garbled", "is not a usable job database"),
        ("UPDATE meta SET value = x'7b6e6f' WHERE key = 'stats'", "'stats' is not valid JSON"),
        ("UPDATE tasks SET priority = NULL WHERE state = 1", "a queued task's priority is NULL"),
        ("UPDATE tasks SET state = 9 WHERE rowid = 3", "state 9 is not a task state"),
    ],
)
async def test_a_job_that_cannot_be_read_back_is_refused_in_one_line(
    serve: Any, tmp_path: Path, how: str, message: str
) -> None:
    await make_job(serve, tmp_path)
    db = tmp_path / "job" / "job.sqlite3"
    damage(db, how)
    hits: list[int] = []
    base = await serve(tree_site(hits))
    for args in (crawl_args(tmp_path, base), ["job", str(tmp_path / "job")]):
        code, out = await run(*args)
        assert code == 2, out
        errors = [line for line in out.splitlines() if line.startswith("error:")]
        assert len(errors) == 1, out
        assert "Traceback" not in out
        assert re.search(message, " ".join(out.split())), out
    assert hits == []  # refused before anything was fetched
