"""No secret is persisted (issue 12, item 14): proxy credentials and the Cookie headers
of redirected requests never reach the job database or Redis, and the requests still
download with their proxy auth and cookies, re-derived at download time by
HttpProxyMiddleware (from this worker's environment) and CookiesMiddleware (its jar).

The site sets a session cookie on /login and redirects through /step (whose request
carries the cookie, so the redirect copies it) to /account. Every request goes through
an authenticating proxy on 127.0.0.1 given by ``http_proxy`` with credentials."""

from __future__ import annotations

import asyncio
import base64
import os
import sqlite3
from pathlib import Path
from typing import Any

import aiohttp
import pytest
from aiohttp import web
from multidict import CIMultiDict
from redis.asyncio import Redis

from skitter import Crawler, Request, Spider
from skitter._job import JobDir
from skitter.redis import JobKeys
from skitter.testing._redis import RedisServer, require_redis_server

PASSWORD = "pr0xy-pa55"
COOKIE = "c00kie-5ecret"
TOKEN = "t0ken-5ecret"
SECRETS = (PASSWORD.encode(), COOKIE.encode(), TOKEN.encode())
SETTINGS = {"ROBOTSTXT_OBEY": False, "LOG_LEVEL": "WARNING", "RETRY_TIMES": 0}


class Site:
    def __init__(self) -> None:
        self.cookies: dict[str, str | None] = {}
        self.account_reached = asyncio.Event()
        self.release_account = asyncio.Event()
        self.release_account.set()
        self.app = web.Application()
        self.app.router.add_get("/login", self.login)
        self.app.router.add_get("/step", self.step)
        self.app.router.add_get("/account", self.account)

    async def login(self, request: web.Request) -> web.Response:
        response = web.Response(status=302, headers={"Location": "/step"})
        response.set_cookie("session", COOKIE)
        return response

    async def step(self, request: web.Request) -> web.Response:
        self.cookies["/step"] = request.headers.get("Cookie")
        return web.Response(status=302, headers={"Location": "/account"})

    async def account(self, request: web.Request) -> web.Response:
        self.cookies["/account"] = request.headers.get("Cookie")
        self.account_reached.set()
        await self.release_account.wait()
        return web.Response(text="<html>account</html>", content_type="text/html")


class Proxy:
    """A forward proxy that demands the credentials, and forwards cookies both ways."""

    def __init__(self) -> None:
        self.seen: list[tuple[str, str | None]] = []
        self.app = web.Application()
        self.app.router.add_route("*", "/{tail:.*}", self.handle)

    async def handle(self, request: web.Request) -> web.StreamResponse:
        auth = request.headers.get("Proxy-Authorization")
        self.seen.append((request.url.path, auth))
        expected = "Basic " + base64.b64encode(f"user:{PASSWORD}".encode()).decode()
        if auth != expected:
            return web.Response(status=407, text="proxy authentication required")
        forward = {k: v for k, v in request.headers.items() if k.lower() == "cookie"}
        async with (
            aiohttp.ClientSession() as session,
            session.get(str(request.url), headers=forward, allow_redirects=False) as upstream,
        ):
            body = await upstream.read()
            headers: CIMultiDict[str] = CIMultiDict()
            for name in ("Location", "Set-Cookie", "Content-Type"):
                for value in upstream.headers.getall(name, ()):
                    headers.add(name, value)
            return web.Response(status=upstream.status, body=body, headers=headers)


class Account(Spider):
    name = "account"

    def start_requests(self) -> Any:
        yield Request(
            self.settings["BASE"] + "/login", headers={"Authorization": f"Bearer {TOKEN}"}
        )

    def parse(self, response: Any) -> Any:
        yield {"url": response.url}


@pytest.fixture
def proxy_env(monkeypatch: pytest.MonkeyPatch) -> None:
    """No proxy from the machine's environment: the test sets its own."""
    for name in list(os.environ):
        if name.lower().endswith("_proxy"):
            monkeypatch.delenv(name)


async def started(serve: Any, monkeypatch: pytest.MonkeyPatch) -> tuple[Site, Proxy, str]:
    site, proxy = Site(), Proxy()
    base = await serve(site.app)
    proxy_url = await serve(proxy.app)
    monkeypatch.setenv("http_proxy", proxy_url.replace("http://", f"http://user:{PASSWORD}@"))
    return site, proxy, base


def downloaded_with_auth_and_cookies(site: Site, proxy: Proxy) -> None:
    assert [path for path, _ in proxy.seen] == ["/login", "/step", "/account"]
    assert all(auth is not None for _, auth in proxy.seen), "every request sent its proxy auth"
    assert site.cookies == {"/step": f"session={COOKIE}", "/account": f"session={COOKIE}"}


async def test_the_job_database_holds_no_secret(
    serve: Any, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, proxy_env: None
) -> None:
    site, proxy, base = await started(serve, monkeypatch)
    crawler = Crawler(Account, {**SETTINGS, "BASE": base}, job_dir=tmp_path / "job")
    stats = await crawler.run()
    assert stats["item_scraped_count"] == 1
    downloaded_with_auth_and_cookies(site, proxy)
    database = sqlite3.connect(JobDir(tmp_path / "job").database)
    try:
        rows = database.execute("SELECT * FROM tasks").fetchall()
    finally:
        database.close()
    assert len(rows) == 3
    for row in rows:
        for value in row:
            raw = value if isinstance(value, bytes) else str(value).encode()
            for secret in SECRETS:
                assert secret not in raw, (secret, row)


async def test_redis_holds_no_secret_and_the_worker_still_authenticates(
    serve: Any, monkeypatch: pytest.MonkeyPatch, proxy_env: None
) -> None:
    site, proxy, base = await started(serve, monkeypatch)
    site.release_account.clear()  # /account waits while Redis is looked at
    with RedisServer(binary=require_redis_server()) as server:
        settings = {**SETTINGS, "BASE": base, "WORKER_IDLE_TIMEOUT": 0.2}
        crawler = Crawler(Account, settings, redis_url=server.url, job="secrets")
        run = asyncio.create_task(crawler.run())
        try:
            await asyncio.wait_for(site.account_reached.wait(), 20)
            keys = JobKeys.for_job("account", "secrets")
            client = Redis.from_url(server.url)
            try:
                stored: list[bytes] = []
                for key in (keys.payloads, keys.tasks, keys.done):
                    for field, value in (await client.hgetall(key)).items():
                        stored += (field, value)
                assert len(await client.hgetall(keys.payloads)) == 1  # /account's, in flight
            finally:
                await client.aclose()
            for raw in stored:
                for secret in SECRETS:
                    assert secret not in raw, (secret, raw)
        finally:
            site.release_account.set()
            stats = await asyncio.wait_for(run, 30)
    assert stats["item_scraped_count"] == 1
    downloaded_with_auth_and_cookies(site, proxy)
