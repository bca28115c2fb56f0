"""A sink's server down for 10 s mid-crawl, on a PostgreSQL of the test's own.

Within the sink's bound (``outage_timeout``) the crawl waits (its tasks are not
acknowledged, its callbacks held by the full buffer) and goes on writing when the
server is back: every item once. Past the bound the crawl fails loudly, counting the
items it did not write; nothing it acknowledged is lost: the job, resumed once the
server is back, writes exactly the missing items.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest
from aiohttp import web

from skitter.crawler import Crawler
from skitter.exceptions import CrawlFailed
from skitter.testing._sinks import PostgresServer, require_postgres_binaries

from ._site import PAGES, Tree

pytestmark = pytest.mark.slow
DOWN_FOR = 10.0


@pytest.fixture
def postgres() -> Iterator[PostgresServer]:
    with require_postgres_binaries()() as server:
        yield server


def site(on_hit: Callable[[int], None]) -> web.Application:
    hits = 0

    async def page(request: web.Request) -> web.Response:
        nonlocal hits
        hits += 1
        on_hit(hits)
        await asyncio.sleep(0.05)  # the site's own pace, so that the outage lands mid-crawl
        return web.Response(text="<html>ok</html>", content_type="text/html")

    app = web.Application()
    app.router.add_get("/p/{n}", page)
    return app


def outage_at(server: PostgresServer, hit: int, down_for: float) -> Callable[[int], None]:
    """Stop the server at the ``hit``-th page (in a thread: the loop goes on), and start
    it again ``down_for`` seconds later."""
    loop = asyncio.get_running_loop()

    def on_hit(n: int) -> None:
        if n == hit:
            stopped = loop.run_in_executor(None, server.stop)
            stopped.add_done_callback(
                lambda _: loop.call_later(down_for, loop.run_in_executor, None, server.start)
            )

    return on_hit


async def rows(uri: str) -> list[tuple[Any, ...]]:
    import psycopg

    async with await psycopg.AsyncConnection.connect(uri) as conn:
        cur = await conn.execute(b"SELECT item_id FROM items")
        return list(await cur.fetchall())


async def test_down_for_ten_seconds_within_the_bound_the_crawl_goes_on_writing(
    serve: Any, postgres: PostgresServer, caplog: pytest.LogCaptureFixture
) -> None:
    caplog.set_level(logging.INFO)
    base = await serve(site(outage_at(postgres, 15, DOWN_FOR)))
    sinks = {f"{postgres.url}?table=items": {"create": True, "outage_timeout": 60}}
    stats = await Crawler(Tree, {"BASE": base, "SINKS": sinks, "CONCURRENT_REQUESTS": 4}).run()
    found = await rows(postgres.url)
    assert len(found) == len(set(found)) == 2 * PAGES
    assert stats["sink/postgresql:items/written"] == 2 * PAGES
    assert "sink/postgresql:items/lost" not in stats
    assert stats["sink/postgresql:items/retries"] > 0
    assert "cannot be reached" in caplog.text and "trying again for up to 60 s" in caplog.text
    assert "is back after" in caplog.text


async def test_down_past_the_bound_fails_loudly_and_a_resume_writes_the_rest(
    serve: Any, postgres: PostgresServer, tmp_path: Path
) -> None:
    base = await serve(site(outage_at(postgres, 15, DOWN_FOR)))
    sinks = {f"{postgres.url}?table=items": {"create": True, "outage_timeout": 3}}
    settings = {"BASE": base, "SINKS": sinks, "CONCURRENT_REQUESTS": 4}
    with pytest.raises(CrawlFailed) as raised:
        await Crawler(Tree, settings, job_dir=tmp_path / "job").run()
    reason = raised.value.reason
    assert "sink postgresql:items" in reason and "(outage_timeout)" in reason
    assert "items not written" in reason
    stats = raised.value.stats
    assert stats["finish_reason"] == "failed"
    lost = stats["sink/postgresql:items/lost"]
    assert lost > 0
    async with asyncio.timeout(60):
        while True:  # the server comes back DOWN_FOR seconds after it stopped
            try:
                written = await rows(postgres.url)
                break
            except Exception:
                # polls a real process: the database server comes back on its own
                await asyncio.sleep(0.2)
    assert len(written) == stats.get("sink/postgresql:items/written", 0) < 2 * PAGES
    await Crawler(Tree, settings, job_dir=tmp_path / "job").run()  # resumed
    found = await rows(postgres.url)
    assert len(found) == len(set(found)) == 2 * PAGES  # the rest, and nothing twice
