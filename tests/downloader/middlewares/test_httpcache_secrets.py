"""What the HTTP cache keeps, and what it serves: no cookie or password on disk unless
HTTPCACHE_STORE_SECRETS says so, never a cached cookie into a later run's jar, and never
a body over the request's size limit. Real crawls against a real site, two runs each."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from aiohttp import web

from skitter import Crawler, Request, Response, Spider

from ..conftest import FAST

STORAGES = ["filesystem", "sqlite"]
COOKIE = "c00kie-Zq9x"
PASSWORD = "pa55-Zq9y"
BIG = 2_000_000


class Site:
    """``/login`` sets a session cookie and links ``/account``, which records the Cookie
    header it got; ``/big`` is 2 MB."""

    def __init__(self) -> None:
        self.cookies: list[str | None] = []
        self.hits: dict[str, int] = {}
        self.app = web.Application()
        self.app.router.add_get("/{tail:.*}", self.handle)

    async def handle(self, request: web.Request) -> web.StreamResponse:
        self.hits[request.path] = self.hits.get(request.path, 0) + 1
        if request.path == "/login":
            response = web.Response(
                text='<html><a href="/account">account</a></html>', content_type="text/html"
            )
            response.set_cookie("session", COOKIE)
            return response
        if request.path == "/account":
            self.cookies.append(request.headers.get("Cookie"))
            return web.Response(text="<html>account</html>", content_type="text/html")
        if request.path == "/big":
            return web.Response(body=b"x" * BIG, content_type="text/plain")
        return web.Response(text="<html>page</html>", content_type="text/html")


@pytest.fixture
async def site(serve: Any) -> tuple[Site, str]:
    s = Site()
    return s, await serve(s.app)


class Login(Spider):
    """``/login``, from the cache after the first run, then ``/account``, always fresh."""

    name = "login"
    seen: list[Response]

    def start_requests(self) -> Any:
        yield Request(self.settings["START"])

    def parse(self, response: Response) -> Any:
        self.seen.append(response)
        for href in response.css("a::attr(href)").getall():
            yield response.follow(href, self.parse, meta={"dont_cache": True})


async def run(settings: dict[str, Any]) -> list[Response]:
    seen: list[Response] = []
    spider = type("Login", (Login,), {"seen": seen})
    await Crawler(spider, {**FAST, "ROBOTSTXT_OBEY": False, **settings}).run()
    return seen


def everything_under(root: Path) -> bytes:
    return b"".join(path.read_bytes() for path in sorted(root.rglob("*")) if path.is_file())


@pytest.mark.parametrize("storage", STORAGES)
async def test_no_cookie_or_password_is_stored_and_the_url_comes_back_whole(
    site: tuple[Site, str], tmp_path: Path, storage: str
) -> None:
    server, base = site
    start = base.replace("http://", f"http://user:{PASSWORD}@") + "/login"
    cache = tmp_path / "cache"
    settings = {"START": start, "HTTPCACHE_ENABLED": True, "HTTPCACHE_DIR": str(cache),
                "HTTPCACHE_STORAGE": storage}  # fmt: skip
    first = await run(settings)
    assert "Set-Cookie" in first[0].headers and server.cookies == [f"session={COOKIE}"]
    stored = everything_under(cache)
    assert stored and COOKIE.encode() not in stored and PASSWORD.encode() not in stored
    assert b"/login" in stored  # the entry is there, only without its secrets

    second = await run(settings)
    assert server.hits["/login"] == 1 and "cached" in second[0].flags
    assert second[0].url == start  # the request's URL, user:password and all
    assert "Set-Cookie" not in second[0].headers
    assert server.cookies == [f"session={COOKIE}", None]  # the cache gave the jar nothing


async def test_with_store_secrets_a_cached_cookie_is_served_but_never_replayed_into_the_jar(
    site: tuple[Site, str], tmp_path: Path
) -> None:
    server, base = site
    settings = {
        "START": f"{base}/login",
        "HTTPCACHE_ENABLED": True,
        "HTTPCACHE_DIR": str(tmp_path / "cache"),
        "HTTPCACHE_STORE_SECRETS": True,
    }
    await run(settings)
    assert COOKIE.encode() in everything_under(tmp_path / "cache")  # kept, as asked
    second = await run(settings)
    assert "cached" in second[0].flags
    assert second[0].headers["Set-Cookie"].startswith(f"session={COOKIE}".encode())
    # An earlier run's session must not log this one in: /account came without a cookie.
    assert server.cookies == [f"session={COOKIE}", None]
    # Entries stored with secrets are served without them once the setting is off.
    third = await run({**settings, "HTTPCACHE_STORE_SECRETS": False})
    assert "cached" in third[0].flags and "Set-Cookie" not in third[0].headers


class Big(Spider):
    name = "big"
    seen: list[int]
    failed: list[str]

    def start_requests(self) -> Any:
        meta = self.settings["META"]
        yield Request(self.settings["START"], meta=meta, errback=self.error)

    def parse(self, response: Response) -> Any:
        self.seen.append(len(response.body))

    def error(self, failure: Any) -> None:
        self.failed.append(type(failure.value).__name__)


@pytest.mark.parametrize(
    "limit",
    [{"DOWNLOAD_MAXSIZE": 100_000}, {"META": {"download_maxsize": 100_000}}],
    ids=["DOWNLOAD_MAXSIZE", "meta"],
)
async def test_a_cached_body_over_the_size_limit_is_a_miss(
    site: tuple[Site, str], tmp_path: Path, limit: dict[str, Any]
) -> None:
    """Cached by a run without a limit; a run with one downloads it again, and that
    download fails on the limit, as it would without the cache."""
    server, base = site
    settings: dict[str, Any] = {
        "START": f"{base}/big",
        "META": {},
        "HTTPCACHE_ENABLED": True,
        "HTTPCACHE_DIR": str(tmp_path / "cache"),
        "RETRY_TIMES": 0,
    }
    outcomes: list[tuple[list[int], list[str], Any]] = []
    for run_settings in (settings, {**settings, **limit}):
        seen: list[int] = []
        failed: list[str] = []
        spider = type("Big", (Big,), {"seen": seen, "failed": failed})
        stats = await Crawler(spider, {**FAST, "ROBOTSTXT_OBEY": False, **run_settings}).run()
        outcomes.append((seen, failed, stats))
    (first, _, _), (second, failed, stats) = outcomes
    assert first == [BIG]
    assert second == [] and failed == ["ResponseTooLarge"]
    assert server.hits["/big"] == 2 and stats["httpcache/too_large"] == 1
