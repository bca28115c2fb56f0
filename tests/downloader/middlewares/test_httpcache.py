"""HttpCacheMiddleware end to end: real crawls against a real site that counts what it
serves, each storage, each policy; a second run of a cached crawl sends no request."""

from __future__ import annotations

import asyncio
import threading
from collections import Counter
from pathlib import Path
from typing import Any

import pytest
from aiohttp import web

from skitter import Crawler, Request, Response, Spider
from skitter._clock import FakeClock
from skitter.downloader import HttpCacheMiddleware
from skitter.exceptions import ConfigError, IgnoreRequest
from skitter.extensions.httpcache import DummyPolicy

from ..conftest import FAST, MakeDownloader

STORAGES = ["filesystem", "sqlite", "dbm"]


def files(root: Path) -> list[Path]:
    return [p for p in root.rglob("*") if p.is_file()]


def tear(path: Path) -> None:
    """Cut the last bytes off an entry, as a crash of some other writer might."""
    path.write_bytes(path.read_bytes()[:-3])


class Site:
    """Three linked pages; ``/etag`` answers If-None-Match with 304, ``/fresh`` is fresh
    for an hour; ``hits`` counts every request by path and ``conditional`` those that
    came with a validator."""

    def __init__(self) -> None:
        self.hits: Counter[str] = Counter()
        self.conditional: Counter[str] = Counter()
        self.version = "1"
        self.app = web.Application()
        self.app.router.add_get("/{tail:.*}", self.handle)

    async def handle(self, request: web.Request) -> web.StreamResponse:
        path = request.path
        self.hits[path] += 1
        if "If-None-Match" in request.headers or "If-Modified-Since" in request.headers:
            self.conditional[path] += 1
        if path == "/":
            links = "".join(f'<a href="/p{i}">p{i}</a>' for i in range(3))
            return web.Response(text=f"<html>{links}</html>", content_type="text/html")
        if path == "/etag":
            etag = f'"v{self.version}"'
            headers = {"ETag": etag, "Cache-Control": "no-cache"}
            if request.headers.get("If-None-Match") == etag:
                return web.Response(status=304, headers={**headers, "X-Seen": "again"})
            return web.Response(text=f"etag v{self.version}", headers=headers)
        if path == "/missing":
            return web.Response(status=404, text="not here")
        if path == "/fresh":
            return web.Response(text="fresh", headers={"Cache-Control": "max-age=3600"})
        return web.Response(text=f"<html><p>{path}</p></html>", content_type="text/html")


@pytest.fixture
async def site(serve: Any) -> tuple[Site, str]:
    s = Site()
    return s, await serve(s.app)


def spider_for(url: str, seen: list[tuple[str, int, bool, bytes]]) -> type[Spider]:
    class Cached(Spider):
        name = "cached"
        start_urls = [url]

        def parse(self, response: Response) -> Any:
            seen.append((response.url, response.status, "cached" in response.flags, response.body))
            for href in response.css("a::attr(href)").getall():
                yield response.follow(href, self.parse)

    return Cached


@pytest.mark.parametrize("storage", STORAGES)
@pytest.mark.parametrize("use_gzip", [False, True])
async def test_a_second_run_sends_no_request(
    site: tuple[Site, str], tmp_path: Path, storage: str, use_gzip: bool
) -> None:
    server, base = site
    settings = {
        **FAST,
        "HTTPCACHE_ENABLED": True,
        "HTTPCACHE_DIR": str(tmp_path / "cache"),
        "HTTPCACHE_STORAGE": storage,
        "HTTPCACHE_GZIP": use_gzip,
    }
    first: list[Any] = []
    stats = await Crawler(spider_for(f"{base}/", first), settings).run()
    assert sum(server.hits.values()) == 4
    assert stats["httpcache/miss"] == 4 and stats["httpcache/store"] == 4
    assert stats["httpcache/firsthand"] == 4
    second: list[Any] = []
    stats = await Crawler(spider_for(f"{base}/", second), settings).run()
    assert sum(server.hits.values()) == 4  # nothing reached the server
    assert stats["httpcache/hit"] == 4 and "httpcache/miss" not in stats
    assert sorted((u, s, b) for u, s, _, b in second) == sorted((u, s, b) for u, s, _, b in first)
    assert all(cached for _, _, cached, _ in second)
    assert not any(cached for _, _, cached, _ in first)


async def test_relative_dir_is_in_the_job_dir_else_in_dot_skitter(
    site: tuple[Site, str], tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    server, base = site
    monkeypatch.chdir(tmp_path)
    settings = {**FAST, "HTTPCACHE_ENABLED": True}
    await Crawler(spider_for(f"{base}/p0", []), settings).run()
    assert list((tmp_path / ".skitter" / "httpcache" / "cached").glob("*/*"))
    job = tmp_path / "job"
    await Crawler(spider_for(f"{base}/p1", []), settings, job_dir=job).run()
    assert list((job / "httpcache" / "cached").glob("*/*"))
    assert server.hits["/p1"] == 1
    sqlite = {**settings, "HTTPCACHE_STORAGE": "sqlite", "HTTPCACHE_DIR": "elsewhere"}
    await Crawler(spider_for(f"{base}/p2", []), sqlite, job_dir=job).run()
    assert (job / "elsewhere" / "cached.sqlite3").exists()


@pytest.mark.parametrize("storage", STORAGES)
async def test_rfc2616_revalidates_no_cache_and_serves_the_body_on_304(
    site: tuple[Site, str], tmp_path: Path, storage: str
) -> None:
    server, base = site
    settings = {
        **FAST,
        "HTTPCACHE_ENABLED": True,
        "HTTPCACHE_DIR": str(tmp_path / "cache"),
        "HTTPCACHE_POLICY": "rfc2616",
        "HTTPCACHE_STORAGE": storage,
    }
    seen: list[Any] = []
    await Crawler(spider_for(f"{base}/etag", seen), settings).run()
    stats = await Crawler(spider_for(f"{base}/etag", seen), settings).run()
    assert server.hits["/etag"] == 2 and server.conditional["/etag"] == 1
    assert stats["httpcache/revalidate"] == 1
    assert seen[1][1:] == (200, True, b"etag v1")  # the 304 served the cached body
    server.version = "2"  # the page changed: a full answer replaces the entry
    stats = await Crawler(spider_for(f"{base}/etag", seen), settings).run()
    assert stats["httpcache/invalidate"] == 1
    assert seen[2][1:] == (200, False, b"etag v2")
    stats = await Crawler(spider_for(f"{base}/etag", seen), settings).run()
    assert seen[3][1:] == (200, True, b"etag v2") and server.conditional["/etag"] == 3


async def test_rfc2616_serves_a_fresh_entry_without_asking(
    site: tuple[Site, str], tmp_path: Path
) -> None:
    server, base = site
    settings = {
        **FAST,
        "HTTPCACHE_ENABLED": True,
        "HTTPCACHE_DIR": str(tmp_path / "cache"),
        "HTTPCACHE_POLICY": "scrapy.extensions.httpcache.RFC2616Policy",
    }
    for _ in range(2):
        await Crawler(spider_for(f"{base}/fresh", []), settings).run()
    # "/" has no validators nor freshness: RFC 2616 does not store it
    for _ in range(2):
        await Crawler(spider_for(f"{base}/p0", []), settings).run()
    assert server.hits["/fresh"] == 1 and server.hits["/p0"] == 2


async def test_304_updates_the_stored_headers(
    site: tuple[Site, str], make_downloader: MakeDownloader, tmp_path: Path
) -> None:
    _, base = site
    settings = {
        "HTTPCACHE_ENABLED": True,
        "HTTPCACHE_DIR": str(tmp_path),
        "HTTPCACHE_POLICY": "rfc2616",
    }
    dl = await make_downloader(settings)
    await dl.fetch(Request(f"{base}/etag"))
    revalidated = await dl.fetch(Request(f"{base}/etag"))
    assert isinstance(revalidated, Response)
    assert revalidated.status == 200 and revalidated.headers["X-Seen"] == b"again"
    assert revalidated.body == b"etag v1"
    cache = dl.middleware(HttpCacheMiddleware)
    stored = await asyncio.to_thread(cache.storage.retrieve_response, None, Request(f"{base}/etag"))
    assert stored.headers["X-Seen"] == b"again" and stored.body == b"etag v1"


async def test_dont_cache_ignore_codes_schemes_and_missing(
    site: tuple[Site, str], make_downloader: MakeDownloader, tmp_path: Path
) -> None:
    server, base = site
    settings = {
        "HTTPCACHE_ENABLED": True,
        "HTTPCACHE_DIR": str(tmp_path),
        "HTTPCACHE_IGNORE_HTTP_CODES": [404],
    }
    dl = await make_downloader({**settings, "HTTPCACHE_IGNORE_SCHEMES": ["http"]})
    for _ in range(2):
        await dl.fetch(Request(f"{base}/p0"))
    assert server.hits["/p0"] == 2 and not files(tmp_path)
    dl = await make_downloader(settings)
    for _ in range(2):
        await dl.fetch(Request(f"{base}/p1", meta={"dont_cache": True}))
        await dl.fetch(Request(f"{base}/missing"))  # a 404, in HTTPCACHE_IGNORE_HTTP_CODES
    assert server.hits["/p1"] == 2 and server.hits["/missing"] == 2
    assert dl.crawler.stats.get("httpcache/uncacheable") == 2
    await dl.fetch(Request(f"{base}/p2"))
    offline = await make_downloader({**settings, "HTTPCACHE_IGNORE_MISSING": True})
    cached = await offline.fetch(Request(f"{base}/p2"))
    assert isinstance(cached, Response) and "cached" in cached.flags
    with pytest.raises(IgnoreRequest, match="not in the HTTP cache"):
        await offline.fetch(Request(f"{base}/p3"))
    assert server.hits["/p3"] == 0
    assert offline.crawler.stats.get("httpcache/ignore") == 1


async def test_expiration_secs(
    site: tuple[Site, str], make_downloader: MakeDownloader, tmp_path: Path
) -> None:
    server, base = site
    dl = await make_downloader(
        {"HTTPCACHE_ENABLED": True, "HTTPCACHE_DIR": str(tmp_path), "HTTPCACHE_EXPIRATION_SECS": 60}
    )
    await dl.fetch(Request(f"{base}/p0"))
    clock = dl.crawler.clock
    assert isinstance(clock, FakeClock)
    clock.advance(59)
    await dl.fetch(Request(f"{base}/p0"))
    assert server.hits["/p0"] == 1
    clock.advance(2)
    await dl.fetch(Request(f"{base}/p0"))
    assert server.hits["/p0"] == 2


async def test_a_corrupt_entry_is_a_counted_miss_and_is_replaced(
    site: tuple[Site, str], make_downloader: MakeDownloader, tmp_path: Path
) -> None:
    server, base = site
    dl = await make_downloader({"HTTPCACHE_ENABLED": True, "HTTPCACHE_DIR": str(tmp_path)})
    await dl.fetch(Request(f"{base}/p0"))
    (entry,) = files(tmp_path)
    tear(entry)
    again = await dl.fetch(Request(f"{base}/p0"))
    assert isinstance(again, Response) and again.body == b"<html><p>/p0</p></html>"
    assert "cached" not in again.flags
    assert dl.crawler.stats.get("httpcache/corrupt") == 1 and server.hits["/p0"] == 2
    third = await dl.fetch(Request(f"{base}/p0"))
    assert isinstance(third, Response) and "cached" in third.flags and server.hits["/p0"] == 2


async def test_off_by_default_and_refuses_unknown_names(make_downloader: MakeDownloader) -> None:
    assert (await make_downloader()).middleware(HttpCacheMiddleware) is None
    with pytest.raises(ConfigError, match="use one of dummy, rfc2616"):
        await make_downloader({"HTTPCACHE_ENABLED": True, "HTTPCACHE_POLICY": "rfc9111"})


@pytest.mark.parametrize("storage", STORAGES)
async def test_a_crawl_never_touches_the_storage_on_the_event_loop(
    site: tuple[Site, str], make_downloader: MakeDownloader, tmp_path: Path, storage: str
) -> None:
    """The middleware keeps Scrapy's synchronous hooks for code that calls them by hand;
    a crawl must take the async ones, whose storage calls run on worker threads."""
    _, base = site
    dl = await make_downloader(
        {"HTTPCACHE_ENABLED": True, "HTTPCACHE_DIR": str(tmp_path), "HTTPCACHE_STORAGE": storage}
    )
    mw = dl.middleware(HttpCacheMiddleware)
    assert mw is not None
    threads: list[threading.Thread] = []
    for name in ("retrieve_response", "store_response"):
        original = getattr(mw.storage, name)

        def spy(*args: Any, _original: Any = original) -> Any:
            threads.append(threading.current_thread())
            return _original(*args)

        setattr(mw.storage, name, spy)
    await dl.fetch(Request(f"{base}/p0"))
    second = await dl.fetch(Request(f"{base}/p0"))
    assert isinstance(second, Response) and "cached" in second.flags
    assert len(threads) == 3 and threading.main_thread() not in threads


def test_scrapy_sync_hooks_with_the_dbm_storage(tmp_path: Path) -> None:
    """Scrapy's API, driven by hand without an event loop: DbmCacheStorage through
    HTTPCACHE_DBM_MODULE, ``spider_opened``, synchronous ``process_request`` /
    ``process_response``."""
    settings = {
        "HTTPCACHE_ENABLED": True,
        "HTTPCACHE_DIR": str(tmp_path),
        "HTTPCACHE_STORAGE": "scrapy.extensions.httpcache.DbmCacheStorage",
        "HTTPCACHE_DBM_MODULE": "dbm.dumb",
    }
    crawler = Crawler(Spider, settings)
    mw = HttpCacheMiddleware.from_crawler(crawler)
    spider = Spider(name="sync")
    mw.spider_opened(spider)
    request = Request("http://127.0.0.1/page")
    assert mw.process_request(request) is None
    response = Response("http://127.0.0.1/page", status=200, body=b"body")
    assert mw.process_response(request, response) is response
    cached = mw.process_request(Request("http://127.0.0.1/page"))
    assert isinstance(cached, Response) and cached.body == b"body" and "cached" in cached.flags
    mw.spider_closed(spider)
    assert mw.storage.dbmodule.__name__ == "dbm.dumb" and list(tmp_path.glob("sync.db*"))


def make_file(path: Path) -> Path:
    path.write_text("not a directory")
    return path


async def test_a_failed_write_is_counted_and_the_response_goes_on(
    site: tuple[Site, str], make_downloader: MakeDownloader, tmp_path: Path
) -> None:
    _, base = site
    blocked = make_file(tmp_path / "cache")  # the cache's directory cannot be made
    dl = await make_downloader({"HTTPCACHE_ENABLED": True, "HTTPCACHE_DIR": str(blocked)})
    response = await dl.fetch(Request(f"{base}/p0"))
    assert isinstance(response, Response) and response.status == 200
    assert dl.crawler.stats.get("httpcache/store_failed") == 1
    assert dl.crawler.stats.get("httpcache/retrieve_failed") == 1
    assert dl.crawler.stats.get("httpcache/store") is None


class KeepOnlyP1(DummyPolicy):
    """A project's own policy, given as a class."""

    def should_cache_request(self, request: Request) -> bool:
        return request.url.endswith("/p1")


async def test_a_policy_class_of_ones_own(
    site: tuple[Site, str], make_downloader: MakeDownloader, tmp_path: Path
) -> None:
    server, base = site
    dl = await make_downloader(
        {"HTTPCACHE_ENABLED": True, "HTTPCACHE_DIR": str(tmp_path), "HTTPCACHE_POLICY": KeepOnlyP1}
    )
    for _ in range(2):
        await dl.fetch(Request(f"{base}/p0"))
        await dl.fetch(Request(f"{base}/p1"))
    assert server.hits["/p0"] == 2 and server.hits["/p1"] == 1


async def test_a_network_error_serves_the_stale_entry(
    make_downloader: MakeDownloader, tmp_path: Path
) -> None:
    dl = await make_downloader(
        {"HTTPCACHE_ENABLED": True, "HTTPCACHE_DIR": str(tmp_path), "HTTPCACHE_POLICY": "rfc2616"}
    )
    url = "http://127.0.0.1:1/gone"  # nothing listens on port 1: the connection is refused
    stale = Response(url, 200, {"ETag": '"x"', "Cache-Control": "no-cache"}, b"old")
    cache = dl.middleware(HttpCacheMiddleware)
    await asyncio.to_thread(cache.storage.store_response, None, Request(url), stale)
    served = await dl.fetch(Request(url))
    assert isinstance(served, Response) and served.body == b"old" and "cached" in served.flags
    assert dl.crawler.stats.get("httpcache/errorrecovery") == 1


async def test_robots_txt_is_served_from_the_cache_too(
    site: tuple[Site, str], tmp_path: Path
) -> None:
    server, base = site
    settings = {
        **FAST,
        "HTTPCACHE_ENABLED": True,
        "HTTPCACHE_DIR": str(tmp_path),
        "ROBOTSTXT_OBEY": True,
    }
    await Crawler(spider_for(f"{base}/p0", []), settings).run()
    assert server.hits["/robots.txt"] == 1
    await Crawler(spider_for(f"{base}/p0", []), settings).run()
    assert sum(server.hits.values()) == 2  # robots.txt and /p0, once each
