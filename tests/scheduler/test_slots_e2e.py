"""Download slots end to end, measured by a local server: per-slot concurrency, no
head-of-line blocking, per-slot delay and token bucket, 429 back-off for one slot only.

All servers are on 127.0.0.1, so "hosts" are told apart by ``meta["download_slot"]``
(Scrapy's meta key), or by port with DOWNLOAD_SLOT_BY=netloc. Every test runs on
virtual time (``VirtualTimeLoop``): arrivals are stamped with the loop's time, so delays,
rates and pauses are asserted exactly.
"""

from __future__ import annotations

import asyncio
import itertools
from collections import Counter, defaultdict
from typing import Any

import pytest
from aiohttp import web

from skitter import Crawler, Request, Response, Spider, run_crawlers
from skitter.testing import VirtualTimeLoop, virtual_clock

pytestmark = pytest.mark.virtual_time


def now() -> float:
    """Virtual seconds since the test started, to the microsecond (the rounding only
    drops float noise: virtual time has no jitter)."""
    return round(asyncio.get_running_loop().time() - VirtualTimeLoop.START, 6)


def steps(start: float, step: float, count: int) -> list[float]:
    return [round(start + step * n, 6) for n in range(count)]


class HostsSite:
    """``/<host>/<n>``: answers after ``latency[host]`` seconds; records arrivals and the
    most requests of each host in flight at once."""

    def __init__(self, latency: dict[str, float], status: dict[str, Any] | None = None):
        self.latency = latency
        self.status = status or {}
        self.arrivals: dict[str, list[float]] = defaultdict(list)
        self.done: dict[str, list[float]] = defaultdict(list)
        self.in_flight: Counter[str] = Counter()
        self.max_in_flight: Counter[str] = Counter()
        self._watch: tuple[set[str], int, asyncio.Event] | None = None
        self.app = web.Application()
        self.app.router.add_get("/{host}/{n}", self.handle)

    async def handle(self, request: web.Request) -> web.Response:
        host = request.match_info["host"]
        self.arrivals[host].append(now())
        self.in_flight[host] += 1
        self.max_in_flight[host] = max(self.max_in_flight[host], self.in_flight[host])
        try:
            await asyncio.sleep(self.latency.get(host, 0.0))  # virtual: the host's latency
            rule = self.status.get(host)
            if rule is not None:
                response = rule(len(self.arrivals[host]))
                if response is not None:
                    return response
            return web.Response(text="<html>ok</html>", content_type="text/html")
        finally:
            self.in_flight[host] -= 1
            self.done[host].append(now())
            if self._watch is not None:
                hosts, count, event = self._watch
                if sum(len(self.done[h]) for h in hosts) >= count:
                    event.set()

    def when_done(self, hosts: set[str], count: int) -> asyncio.Event:
        """An event set once ``hosts`` have answered ``count`` requests between them."""
        event = asyncio.Event()
        self._watch = (hosts, count, event)
        return event


def hosts_spider(base: str, plan: list[tuple[str, int]]) -> type[Spider]:
    """Start requests for each (host, count), interleaved in the given order."""

    class Hosts(Spider):
        name = "hosts"

        def start_requests(self) -> Any:
            counters = {host: iter(range(n)) for host, n in plan}
            for host, _ in itertools.cycle(plan):
                if not counters:
                    return
                if host not in counters:
                    continue
                n = next(counters[host], None)
                if n is None:
                    del counters[host]
                    continue
                yield Request(f"{base}/{host}/{n}", meta={"download_slot": host})

        def parse(self, response: Response) -> None:
            return None

    return Hosts


async def test_a_slot_limited_to_two_never_sees_more_while_others_run_wide(
    serve: Any,
) -> None:
    site = HostsSite({"limited": 0.05, "b": 0.05, "c": 0.05})
    base = await serve(site.app)
    spider = hosts_spider(base, [("limited", 40), ("b", 40), ("c", 40)])
    settings = {
        "CONCURRENT_REQUESTS": 64,
        "CONCURRENT_REQUESTS_PER_DOMAIN": 16,
        "DOWNLOAD_SLOTS": {"limited": {"concurrency": 2}},
    }
    stats = await Crawler(spider, settings, clock=virtual_clock()).run()
    assert stats["response_received_count"] == 120
    assert site.max_in_flight["limited"] == 2
    assert site.max_in_flight["b"] > 2
    assert site.max_in_flight["c"] > 2


async def _fast_hosts_elapsed(serve: Any, with_slow: bool) -> float:
    fast = {f"fast{i}": 0.05 for i in range(4)}
    site = HostsSite({**fast, "slow": 2.0})
    base = await serve(site.app)
    plan = [(host, 100) for host in fast]
    if with_slow:
        plan = [("slow", 200), *plan]  # the slow host's tasks come first in the queue
    crawler = Crawler(
        hosts_spider(base, plan),
        {"CONCURRENT_REQUESTS": 64, "CONCURRENT_REQUESTS_PER_DOMAIN": 4},
        clock=virtual_clock(),
    )
    all_fast_done = site.when_done(set(fast), 400)
    task = asyncio.create_task(crawler.run())
    started = now()
    await all_fast_done.wait()
    elapsed = round(now() - started, 6)
    crawler.stop()
    await task
    return elapsed


async def test_a_slow_host_does_not_hold_up_the_fast_ones(serve: Any) -> None:
    # 4 hosts x 100 requests x 50 ms at 4 per host: bound by the slots, 25 rounds of
    # 50 ms, with or without 200 requests to a host that takes 2 s queued before them
    assert await _fast_hosts_elapsed(serve, with_slow=False) == 1.25
    assert await _fast_hosts_elapsed(serve, with_slow=True) == 1.25


async def test_slot_delay_and_token_bucket_are_measured_by_the_server(serve: Any) -> None:
    site = HostsSite({})
    base = await serve(site.app)
    spider = hosts_spider(base, [("delayed", 16), ("bucket", 31)])
    settings = {
        "RANDOMIZE_DOWNLOAD_DELAY": False,
        "DOWNLOAD_SLOTS": {
            "delayed": {"delay": 0.2},
            "bucket": {"rate": 10, "burst": 1},
        },
    }
    await Crawler(spider, settings, clock=virtual_clock()).run()
    assert site.arrivals["delayed"] == steps(0.0, 0.2, 16)
    assert site.arrivals["bucket"] == steps(0.0, 0.1, 31)


async def test_retry_after_pauses_one_host_only(serve: Any) -> None:
    def first_429(count: int) -> web.Response | None:
        if count == 1:
            return web.Response(status=429, headers={"Retry-After": "3"})
        return None

    site = HostsSite({"other": 0.1}, status={"throttled": first_429})
    base = await serve(site.app)
    spider = hosts_spider(base, [("throttled", 5), ("other", 40)])
    settings = {"CONCURRENT_REQUESTS_PER_DOMAIN": 1, "RETRY_DELAYS": [0.0]}
    stats = await Crawler(spider, settings, clock=virtual_clock()).run()
    # 5 tasks, the first twice: nothing more to the throttled host for Retry-After's 3 s
    assert site.arrivals["throttled"] == [0.0] + [3.0] * 5
    assert site.arrivals["other"] == steps(0.0, 0.1, 40)  # the other host went on
    assert stats["retry/reason_count/HTTP 429"] == 1


async def test_slots_by_port_with_netloc(serve: Any) -> None:
    sites = [HostsSite({"p": 0.05}) for _ in range(2)]
    bases = [await serve(site.app) for site in sites]

    class Ports(Spider):
        name = "ports"

        def start_requests(self) -> Any:
            for n in range(12):
                for base in bases:
                    yield Request(f"{base}/p/{n}")

        def parse(self, response: Response) -> None:
            return None

    settings = {"DOWNLOAD_SLOT_BY": "netloc", "CONCURRENT_REQUESTS_PER_DOMAIN": 3}
    crawler = Crawler(Ports, settings, clock=virtual_clock())
    await run_crawlers([crawler])
    # each port is its own slot of 3: both servers saw 3 at once, not 3 between them
    assert [site.max_in_flight["p"] for site in sites] == [3, 3]


async def test_robots_crawl_delay_spaces_a_hosts_downloads(serve: Any) -> None:
    site = HostsSite({})

    async def robots(request: web.Request) -> web.Response:
        return web.Response(text="User-agent: *\nCrawl-delay: 0.3\n")

    site.app.router.add_get("/robots.txt", robots)
    base = await serve(site.app)

    class Polite(Spider):
        name = "polite"

        def start_requests(self) -> Any:
            for n in range(8):
                yield Request(f"{base}/h/{n}")

        def parse(self, response: Response) -> None:
            return None

    settings = {"ROBOTSTXT_OBEY": True, "RANDOMIZE_DOWNLOAD_DELAY": False}
    await Crawler(Polite, settings, clock=virtual_clock()).run()
    # 0.3 s apart from the first on: the one that read robots.txt counts too
    assert site.arrivals["h"] == steps(0.0, 0.3, 8)


async def test_slots_by_ip_join_hosts_on_one_address(serve: Any) -> None:
    together = {"now": 0, "max": 0}  # in flight on both servers at once

    async def handle(request: web.Request) -> web.Response:
        together["now"] += 1
        together["max"] = max(together["max"], together["now"])
        try:
            await asyncio.sleep(0.05)  # virtual: a download that takes 50 ms
            return web.Response(text="ok")
        finally:
            together["now"] -= 1

    bases = []
    for _ in range(2):
        app = web.Application()
        app.router.add_get("/p/{n}", handle)
        bases.append(await serve(app))

    class Ports(Spider):
        name = "ports"

        def start_requests(self) -> Any:
            for n in range(12):
                for base in bases:
                    yield Request(f"{base}/p/{n}")

        def parse(self, response: Response) -> None:
            return None

    for by, limit in (("ip", 3), ("netloc", 6)):
        together["max"] = 0
        settings = {"DOWNLOAD_SLOT_BY": by, "CONCURRENT_REQUESTS_PER_DOMAIN": 3}
        await Crawler(Ports, settings, clock=virtual_clock()).run()
        # by ip: one address, one slot of 3 for both ports; by netloc: a slot each
        assert together["max"] == limit, (by, together["max"])


async def test_ip_slot_key_resolves_ahead_and_caches() -> None:
    from skitter.scheduler._slots import IpSlotKey

    asked: list[str] = []

    async def resolver(host: str) -> str | None:
        asked.append(host)
        return {"a.example": "10.0.0.1", "b.example": "10.0.0.1"}.get(host)

    key = IpSlotKey(resolver)
    requests = [Request(f"http://{h}/x") for h in ("a.example", "b.example", "c.example")]
    assert key(requests[0]) == "a.example"  # not resolved yet: the host is its own slot
    await key.prepare(requests)
    await key.prepare(requests)  # cached: not asked again
    assert sorted(asked) == ["a.example", "b.example", "c.example"]
    assert [key(r) for r in requests] == ["10.0.0.1", "10.0.0.1", "c.example"]
    pinned = Request("http://a.example/y", meta={"download_slot": "mine"})
    assert key(pinned) == "mine"
