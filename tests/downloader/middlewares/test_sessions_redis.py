"""Sessions shared by the workers of a Redis job, on a real redis-server.

The site is test_sessions's: a visitor without a ``sid`` cookie gets a new one, and a
visitor is blocked from its sixth request on. A test middleware tells the site which
worker sent each request (its User-Agent) and which session (``X-Session``), so the
site's log says who used what.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
from collections.abc import AsyncIterator
from typing import Any

import pytest
from aiohttp import web
from redis.asyncio import Redis

from skitter import Crawler, Request, Spider
from skitter.cluster._sessions import RedisSessions
from skitter.downloader.middlewares._cookies import CookiesMiddleware
from skitter.downloader.middlewares._sessionpool import SessionPool, jar_key
from skitter.downloader.middlewares._sessionshare import SharedSessions
from skitter.exceptions import FrontierUnavailable
from skitter.redis import JobKeys
from skitter.testing import refused_port
from skitter.testing._redis import redis_server_fixture, redis_url_fixture

from .test_sessions import HITS, LIMIT, PAGES, Pages, blocking_site

redis_server = redis_server_fixture()
redis_url = redis_url_fixture()

#: The site's log: (sid cookie or None, User-Agent, skitter session id, status).
LOG = web.AppKey("log", list[tuple[str | None, str, str, int]])


def logged_site(limit: int = LIMIT, *, both: bool = False) -> web.Application:
    """``both``: hold every request until both workers have sent one (at most 10 s),
    so that they crawl side by side even when one starts late on a loaded machine."""
    app = blocking_site(limit=limit)
    app[LOG] = []
    agents: set[str] = set()
    met = asyncio.Event()

    @web.middleware
    async def record(request: web.Request, handler: Any) -> web.StreamResponse:
        if both:
            agents.add(request.headers.get("User-Agent", ""))
            if len(agents) >= 2:
                met.set()
            with contextlib.suppress(TimeoutError):
                await asyncio.wait_for(met.wait(), 10)
        await asyncio.sleep(0.05)  # both workers get a share of the pages
        response = await handler(request)
        entry = (
            request.cookies.get("sid"),
            request.headers.get("User-Agent", ""),
            request.headers.get("X-Session", ""),
            response.status,
        )
        request.app[LOG].append(entry)
        return response

    app.middlewares.append(record)
    return app


class TellSession:
    """Inside SessionMiddleware: the request says which session it went out as."""

    def process_request(self, request: Request, spider: Any) -> None:
        request.headers["X-Session"] = str(request.meta.get("session_id"))


class Collect:
    items: list[dict[str, Any]] = []

    def process_item(self, item: dict[str, Any], spider: Spider) -> dict[str, Any]:
        Collect.items.append(item)
        return item


def worker(redis_url: str, base: str, name: str, **settings: Any) -> Crawler:
    return Crawler(
        Pages,
        {
            "BASE": base,
            "USER_AGENT": name,
            "CONCURRENT_REQUESTS": 2,
            "RETRY_DELAYS": [0.0],
            "LOG_LEVEL": "WARNING",
            "ROBOTSTXT_OBEY": False,
            "WORKER_IDLE_TIMEOUT": 0.5,
            "LEASE_SECONDS": 2.0,
            "ITEM_PIPELINES": {Collect: 100},
            "DOWNLOADER_MIDDLEWARES": {TellSession: 660},
            **settings,
        },
        redis_url=redis_url,
        job="shared",
    )


async def two_workers(
    redis_url: str, base: str, settings: dict[str, Any]
) -> tuple[Crawler, Crawler]:
    """Workers "one" and "two" crawling the site together, to the end."""
    Collect.items = []
    one, two = (
        worker(redis_url, base, "one", **settings),
        worker(redis_url, base, "two", **settings),
    )
    await asyncio.wait_for(asyncio.gather(one.run(), two.run()), 60)
    return one, two


def crawled() -> set[str]:
    return {item["url"] for item in Collect.items}


def every_page(base: str) -> set[str]:
    return {f"{base}/"} | {f"{base}/page/{n}" for n in range(1, PAGES)}


async def session_keys(client: Redis) -> list[bytes]:
    keys = JobKeys.for_job("pages", "shared")
    return [k async for k in client.scan_iter(match=keys.scan("sessions")[0])] + [
        k for k in [keys.sessions.encode()] if await client.exists(keys.sessions)
    ]


@pytest.fixture
async def client(redis_url: str) -> AsyncIterator[Redis]:
    client = Redis.from_url(redis_url)
    await client.flushall()
    yield client
    await client.aclose()


async def test_two_workers_share_sessions_and_count_their_uses_job_wide(
    serve: Any, redis_url: str, client: Redis
) -> None:
    app = logged_site(both=True)
    base = await serve(app)
    settings = {"SESSION_POOL_SIZE": 1, "SESSION_MAX_USES": LIMIT, "REDIS_PERSIST": False}
    one, two = await two_workers(redis_url, base, settings)
    assert crawled() == every_page(base)
    # Uses are counted job-wide: no session went past SESSION_MAX_USES, so none was
    # blocked although each worker alone would have used each one up.
    assert max(app[HITS].values()) <= LIMIT
    assert all(status == 200 for *_, status in app[LOG])
    # Sessions made by one worker were used by the other (same session id, same cookie).
    by_session: dict[str, set[str]] = {}
    for _sid, agent, session, _ in app[LOG]:
        by_session.setdefault(session, set()).add(agent)
    assert any(agents == {"one", "two"} for agents in by_session.values())
    stats = [one.stats.to_dict(), two.stats.to_dict()]
    created = sum(s.get("sessions/created", 0) for s in stats)
    assert created == len(by_session)  # each session counted once, by its maker
    assert sum(s.get("sessions/retired/max_uses", 0) for s in stats) <= created
    assert await session_keys(client) == []  # the last worker out cleared the job


async def test_the_workers_send_one_sessions_cookies(
    serve: Any, redis_url: str, client: Redis
) -> None:
    app = logged_site(limit=10_000)
    base = await serve(app)
    settings = {"SESSION_POOL_SIZE": 1, "SESSION_MAX_USES": 0}
    await two_workers(redis_url, base, settings)
    assert crawled() == every_page(base)
    by_cookie: dict[str, set[str]] = {}
    for sid, agent, session, _ in app[LOG]:
        assert session == "s1"
        if sid is not None:  # not one of the session's first requests
            by_cookie.setdefault(sid, set()).add(agent)
    # The cookie the site set on one worker's request came back on the other's: the
    # site saw one visitor, not one per worker.
    assert {"one", "two"} in by_cookie.values()


async def test_blocked_sessions_are_retired_once_for_the_whole_job(
    serve: Any, redis_url: str, client: Redis
) -> None:
    app = logged_site()
    base = await serve(app)
    settings = {"SESSION_POOL_SIZE": 2, "SESSION_MAX_USES": 0}
    one, two = await two_workers(redis_url, base, settings)
    assert crawled() == every_page(base)
    gone = await client.lrange(JobKeys.for_job("pages", "shared").sessions_retired, 0, -1)
    ids = [entry.split()[0] for entry in gone]
    assert len(ids) == len(set(ids))  # retired once, whoever saw the block
    assert all(entry.endswith(b" blocked") for entry in gone)
    stats = [one.stats.to_dict(), two.stats.to_dict()]
    assert sum(s.get("sessions/retired/blocked", 0) for s in stats) == len(gone) >= 4
    blocked = {session for _, _, session, status in app[LOG] if status == 403}
    assert blocked == {i.decode() for i in ids}
    # No session went on being used past its block by both workers' concurrency.
    for session in blocked:
        assert sum(1 for *_, s, status in app[LOG] if s == session and status == 403) <= 4


async def test_a_worker_restarted_mid_crawl_goes_on_with_the_jobs_sessions(
    serve: Any, redis_url: str, client: Redis
) -> None:
    app = logged_site(limit=10_000)
    base = await serve(app)
    Collect.items = []
    settings = {"SESSION_POOL_SIZE": 1, "SESSION_MAX_USES": 0}
    first = worker(redis_url, base, "one", CLOSESPIDER_PAGECOUNT=6, **settings)
    await asyncio.wait_for(first.run(), 60)
    assert len(Collect.items) < PAGES
    again = worker(redis_url, base, "two", **settings)
    await asyncio.wait_for(again.run(), 60)
    assert crawled() == every_page(base)
    assert "sessions/created" not in again.stats.to_dict()
    sids = {sid for sid, agent, *_ in app[LOG] if agent == "two"}
    assert sids == {sid for sid, agent, *_ in app[LOG] if agent == "one" and sid}  # one visitor


async def test_a_session_retired_by_one_worker_is_not_used_by_another(
    redis_url: str, client: Redis
) -> None:
    keys = JobKeys.for_job("pages", "unit")
    pool = SessionPool(1)
    a = SharedSessions(RedisSessions(client, keys), pool, fresh=0.0)
    second = Redis.from_url(redis_url)
    try:
        b = SharedSessions(RedisSessions(second, keys), pool, fresh=0.0)
        mine, new = await a.take("host", None, None)
        theirs, again = await b.take("host", None, None)
        assert (new, again) == (True, False)
        assert mine.id == theirs.id == "s1"  # one pool: the second worker uses the first's
        assert await a.retire(mine, "blocked")
        assert not await b.retire(theirs, "blocked")  # retired once, job-wide
        fresh, new = await b.take("host", None, None)
        assert fresh.id == "s2" and new
    finally:
        await second.aclose()


async def test_uses_are_leased_so_the_job_wide_count_never_passes_max_uses(
    redis_url: str, client: Redis
) -> None:
    keys = JobKeys.for_job("pages", "unit")
    pool = SessionPool(1, max_uses=6)
    a = SharedSessions(RedisSessions(client, keys), pool)
    b = SharedSessions(RedisSessions(client, keys), pool)
    sent: list[tuple[str, str]] = []
    for who in [a, b] * 6:
        session, _ = await who.take("host", None, None)
        sent.append(("a" if who is a else "b", session.id))
        who.used(session)
    by_id: dict[str, int] = {}
    for _, sid in sent:
        by_id[sid] = by_id.get(sid, 0) + 1
    assert max(by_id.values()) <= 6
    assert {who for who, sid in sent if sid == "s1"} == {"a", "b"}


async def test_a_used_up_session_is_dropped_by_all_but_the_worker_with_its_last_uses(
    client: Redis,
) -> None:
    keys = JobKeys.for_job("pages", "unit")
    pool = SessionPool(1, max_uses=6)
    cookies = CookiesMiddleware()
    a = SharedSessions(RedisSessions(client, keys), pool, fresh=0.0)
    b = SharedSessions(RedisSessions(client, keys), pool, fresh=0.0)
    mine, _ = await a.take("host", None, cookies)  # uses 1-4 (a lease)
    cookies.jar(jar_key(mine.id))
    assert not a.used(mine)
    theirs, _ = await b.take("host", None, None)  # uses 5-6: the last ones
    assert theirs.id == mine.id
    after, new = await a.take("host", None, cookies)  # a hears s1 is used up
    assert (after.id, new) == ("s2", True)
    assert jar_key(mine.id) not in cookies.jars  # and forgot its cookies
    assert [s.id for s in b.live()] == ["s1"]  # b makes its last uses...
    assert not b.used(theirs)
    assert b.used(theirs)  # ... and retires it (counted once: by b)
    assert b.live() == []


async def test_a_restarted_worker_picks_up_the_sessions_and_their_cookies(
    redis_url: str, client: Redis, caplog: pytest.LogCaptureFixture
) -> None:
    caplog.set_level(logging.DEBUG)
    keys = JobKeys.for_job("pages", "unit")
    pool = SessionPool(2, fingerprints=["chrome", "firefox"])
    cookies = CookiesMiddleware()
    a = SharedSessions(RedisSessions(client, keys), pool)
    first, _ = await a.take("host", None, cookies)
    jar = cookies.jar(jar_key(first.id))
    jar.update_cookies({"sid": "s3cr3t-v4lue"})
    cookies.dirty.add(jar_key(first.id))
    first.proxy = 1
    await a.learnt(first, cookies)
    raw = await client.hget(keys.session_jars, first.id)
    assert raw is not None and b"s3cr3t-v4lue" in raw  # JSON, not a pickle
    assert raw.lstrip().startswith(b"{")
    # A new worker (a restarted one: no lease, no jar) gets the same session back.
    restarted_cookies = CookiesMiddleware()
    b = SharedSessions(RedisSessions(client, keys), SessionPool(1))
    again, new = await b.take("host", first.id, restarted_cookies)
    assert (again.id, new, again.proxy, again.fingerprint) == (first.id, False, 1, "chrome")
    restored = restarted_cookies.jars[jar_key(first.id)]
    assert {m.key: m.value for m in restored} == {"sid": "s3cr3t-v4lue"}
    record = await client.hget(keys.session_scope("host"), first.id)
    assert record is not None and b"s3cr3t" not in record
    assert "s3cr3t" not in caplog.text  # a cookie's value is a credential


def test_a_sharded_jobs_sessions_are_on_shard_0() -> None:
    keys = JobKeys.for_job("pages", "unit", shards=3)
    for k in (1, 2):
        shard = keys.shard(k)
        names = [shard.sessions, shard.session_scope("h"), shard.session_jars]
        assert all(name.startswith(keys.shards[0] + ":sessions") for name in names)
        assert shard.sessions_retired == keys.sessions_retired
    assert keys.session_scope("") != keys.session_scope("-")


async def test_sessions_are_cleared_with_the_job(client: Redis) -> None:
    keys = JobKeys.for_job("pages", "unit")
    store = RedisSessions(client, keys)
    shared = SharedSessions(store, SessionPool(2))
    for scope in ("a", "b", ""):
        session, _ = await shared.take(scope, None, None)
    await store.retire(session, "blocked")
    assert await client.keys(f"{keys.tag}*")
    assert await store.clear() >= 4  # made, two scopes, the retired list
    assert await client.keys(f"{keys.tag}*") == []


async def test_a_job_without_sessions_writes_no_session_key(
    serve: Any, redis_url: str, client: Redis
) -> None:
    app = logged_site()
    base = await serve(app)
    Collect.items = []
    crawler = worker(redis_url, base, "one", REDIS_PERSIST=True, CLOSESPIDER_PAGECOUNT=3)
    await asyncio.wait_for(crawler.run(), 60)
    assert await session_keys(client) == []


async def test_redis_out_of_reach_is_the_jobs_outage_not_the_requests_failure() -> None:
    port = refused_port()
    gone = Redis.from_url(f"redis://127.0.0.1:{port}/0")
    try:
        shared = SharedSessions(
            RedisSessions(gone, JobKeys.for_job("pages", "unit")), SessionPool(1)
        )
        with pytest.raises(FrontierUnavailable, match=r"Redis for pages/unit \(sessions\)"):
            await shared.take("host", None, None)
    finally:
        await gone.aclose()
