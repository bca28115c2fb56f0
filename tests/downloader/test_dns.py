"""DNS (issue 16): DNS_RESOLVER, DNS_TIMEOUT, DNSCACHE_ENABLED / DNSCACHE_SIZE, and one
resolver shared by the transport and the per-IP download slots.

Made-up names (``shop.test``...) are mapped to 127.0.0.1 by a resolver the tests plug
in through DNS_RESOLVER, so the servers are all on the loopback."""

from __future__ import annotations

import asyncio
import socket
from collections import Counter
from typing import Any

import pytest
from aiohttp import web

from skitter import Crawler, Request, Spider
from skitter._clock import FakeClock
from skitter.downloader import ThreadedResolver
from skitter.downloader._dns import CrawlResolver, crawl_resolver
from skitter.exceptions import ConfigError, ConnectError
from skitter.settings import Settings

from .conftest import MakeTransport

LOOKUPS: Counter[str] = Counter()


class MapResolver:
    """Names from the TEST_HOSTS setting, counted in LOOKUPS; others do not resolve."""

    def __init__(self, hosts: dict[str, str]) -> None:
        self.hosts = hosts

    @classmethod
    def from_settings(cls, settings: Settings) -> MapResolver:
        return cls(dict(settings["TEST_HOSTS"]))

    async def resolve(self, host: str) -> list[str]:
        LOOKUPS[host] += 1
        await asyncio.sleep(0)
        if host not in self.hosts:
            raise socket.gaierror(socket.EAI_NONAME, "Name or service not known")
        return [self.hosts[host]]


@pytest.fixture(autouse=True)
def _fresh_lookups() -> None:
    LOOKUPS.clear()


class Gate:
    """A resolver that answers only when let go (``release``)."""

    def __init__(self) -> None:
        self.calls = 0
        self.go = asyncio.Event()

    async def resolve(self, host: str) -> list[str]:
        self.calls += 1
        await self.go.wait()
        return ["127.0.0.1"]


# -- the cache -------------------------------------------------------------------------------------
async def test_answers_are_cached_for_a_while_and_failures_are_not() -> None:
    clock = FakeClock()
    resolver = CrawlResolver(MapResolver({"a.test": "127.0.0.1"}), clock=clock.monotonic)
    assert await resolver.resolve("a.test") == ["127.0.0.1"]
    assert await resolver.resolve("A.test") == ["127.0.0.1"]
    assert LOOKUPS["a.test"] == 1
    clock.advance(301)  # past the cache's 300 s
    await resolver.resolve("a.test")
    assert LOOKUPS["a.test"] == 2
    for _ in range(2):
        with pytest.raises(OSError, match="not known"):
            await resolver.resolve("b.test")
    assert LOOKUPS["b.test"] == 2


async def test_the_cache_holds_dnscache_size_names_least_recently_used_out() -> None:
    hosts = {f"h{i}.test": "127.0.0.1" for i in range(3)}
    resolver = CrawlResolver(MapResolver(hosts), cache_size=2)
    for host in ("h0.test", "h1.test", "h0.test", "h2.test"):  # h1 is the oldest used
        await resolver.resolve(host)
    await resolver.resolve("h0.test")
    await resolver.resolve("h1.test")
    assert LOOKUPS == {"h0.test": 1, "h1.test": 2, "h2.test": 1}


async def test_no_cache_when_disabled() -> None:
    resolver = crawl_resolver(
        Settings(
            {
                "DNSCACHE_ENABLED": False,
                "DNS_RESOLVER": MapResolver,
                "TEST_HOSTS": {"a.test": "127.0.0.1"},
            }
        )
    )
    for _ in range(3):
        await resolver.resolve("a.test")
    assert LOOKUPS["a.test"] == 3


async def test_lookups_at_the_same_time_share_one_query() -> None:
    gate = Gate()
    resolver = CrawlResolver(gate)
    waiting = [asyncio.ensure_future(resolver.resolve("x.test")) for _ in range(5)]
    await asyncio.sleep(0)
    waiting[0].cancel()  # one waiter gives up: the others still get the answer
    gate.go.set()
    results = await asyncio.gather(*waiting[1:])
    assert results == [["127.0.0.1"]] * 4
    assert gate.calls == 1


async def test_a_lookup_longer_than_dns_timeout_fails_saying_so() -> None:
    resolver = CrawlResolver(Gate(), timeout=0.01)  # the gate never opens
    with pytest.raises(socket.gaierror, match="longer than DNS_TIMEOUT"):
        await resolver.resolve("slow.test")


class Broken:
    def __init__(self, answer: Any) -> None:
        self.answer = answer

    async def resolve(self, host: str) -> list[str]:
        if isinstance(self.answer, Exception):
            raise self.answer
        return self.answer  # type: ignore[no-any-return]


@pytest.mark.parametrize(
    ("answer", "message"),
    [
        (KeyError("boom"), r"DNS_RESOLVER Broken failed: KeyError\('boom'\)"),
        (["not-an-ip"], "DNS_RESOLVER Broken failed: ValueError"),
        ([], "has no address"),
    ],
)
async def test_a_resolver_breaking_its_contract_fails_the_lookup(answer: Any, message: str) -> None:
    with pytest.raises(socket.gaierror, match=message):
        await CrawlResolver(Broken(answer)).resolve("x.test")


# -- DNS_RESOLVER ----------------------------------------------------------------------------
async def test_the_default_is_the_systems_resolver() -> None:
    resolver = crawl_resolver(Settings())
    assert isinstance(resolver._inner, ThreadedResolver)
    assert await resolver.resolve("127.0.0.1") == ["127.0.0.1"]
    for scrapys in (
        "scrapy.resolver.CachingThreadedResolver",
        "scrapy.resolver.CachingHostnameResolver",
    ):
        built = crawl_resolver(Settings({"DNS_RESOLVER": scrapys}))
        assert isinstance(built._inner, ThreadedResolver)


class NotAResolver:
    def resolve(self, host: str) -> list[str]:  # not async
        return []


@pytest.mark.parametrize(
    ("settings", "message"),
    [
        ({"DNS_RESOLVER": "no.such.module.Resolver"}, "cannot import"),
        ({"DNS_RESOLVER": NotAResolver}, "must be a class with an async resolve"),
        ({"DNSCACHE_SIZE": 0}, "DNSCACHE_SIZE must be 1 or more"),
        ({"DNS_TIMEOUT": -1}, "DNS_TIMEOUT must be"),
    ],
)
def test_settings_that_cannot_work_are_refused(settings: dict[str, Any], message: str) -> None:
    with pytest.raises(ConfigError, match=message):
        crawl_resolver(Settings(settings))


# -- the transport ---------------------------------------------------------------------------
async def test_the_transport_connects_where_the_resolver_says(
    serve: Any, make_transport: MakeTransport
) -> None:
    async def host(request: web.Request) -> web.Response:
        return web.Response(text=request.host)

    app = web.Application()
    app.router.add_get("/", host)
    port = (await serve(app)).rsplit(":", 1)[1]
    transport, _ = await make_transport(
        {"DNS_RESOLVER": MapResolver, "TEST_HOSTS": {"shop.test": "127.0.0.1"}}
    )
    for _ in range(3):
        response = await transport.fetch(Request(f"http://shop.test:{port}/", meta={}))
        assert response.text == f"shop.test:{port}"
    assert LOOKUPS["shop.test"] == 1
    with pytest.raises(ConnectError, match=r"DNS lookup of .nowhere\.test. failed: Name or ser"):
        await transport.fetch(Request(f"http://nowhere.test:{port}/"))


# -- per-IP slots ---------------------------------------------------------------------------------
async def test_per_ip_slots_use_the_crawls_resolver(serve: Any) -> None:
    in_flight, most = 0, 0

    async def page(request: web.Request) -> web.Response:
        nonlocal in_flight, most
        in_flight += 1
        most = max(most, in_flight)
        await asyncio.sleep(0.02)  # long enough for a second download to start, if allowed
        in_flight -= 1
        return web.Response(text="<html>ok</html>", content_type="text/html")

    app = web.Application()
    app.router.add_get("/{n}", page)
    port = (await serve(app)).rsplit(":", 1)[1]
    hosts = ("a.test", "b.test", "c.test")

    class OneMachine(Spider):
        name = "one-machine"
        start_urls = tuple(f"http://{h}:{port}/{n}" for h in hosts for n in range(4))

        def parse(self, response: Any) -> Any:
            yield {"url": response.url}

    settings = {
        "DNS_RESOLVER": MapResolver,
        "TEST_HOSTS": dict.fromkeys(hosts, "127.0.0.1"),
        "CONCURRENT_REQUESTS_PER_IP": 1,
    }
    stats = await Crawler(OneMachine, settings).run()
    assert stats["item_scraped_count"] == 12
    assert most == 1  # three host names, one machine: one download at a time
    assert dict.fromkeys(hosts, 1) == LOOKUPS  # the slots and the transport asked once

    most = 0
    by_host = {**settings, "CONCURRENT_REQUESTS_PER_IP": 0, "CONCURRENT_REQUESTS_PER_DOMAIN": 1}
    await Crawler(OneMachine, by_host).run()
    assert most > 1  # by host, the three names are three slots


def test_per_ip_concurrency_refuses_another_slot_rule() -> None:
    class Any_(Spider):
        name = "any"

    settings = {"CONCURRENT_REQUESTS_PER_IP": 2, "DOWNLOAD_SLOT_BY": "netloc"}
    with pytest.raises(ConfigError, match="CONCURRENT_REQUESTS_PER_IP makes slots by IP"):
        Crawler(Any_, settings).build()
