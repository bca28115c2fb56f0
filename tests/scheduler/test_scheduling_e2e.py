"""The scheduler end to end, measured by a local server that records arrivals: retry
delays, the circuit breaker's pause and probes, token-bucket rates (also changed live),
fair share between projects, @config and serve mode (@every, auto-recrawl).

Every test runs on virtual time (``VirtualTimeLoop``; the crawl's clock is the loop's):
the server stamps each arrival with the loop's time, so a delay, a pause or a rate is
asserted exactly, never within a tolerance of the wall clock.
"""

from __future__ import annotations

import asyncio
from collections import Counter
from typing import Any

import pytest
from aiohttp import web

from skitter import Crawler, Request, Response, Spider, config, every, run_crawlers
from skitter.testing import MockTransport, VirtualTimeLoop, virtual_clock

pytestmark = pytest.mark.virtual_time


def now() -> float:
    """Virtual seconds since the test started, to the microsecond (the rounding only
    drops float noise: virtual time has no jitter)."""
    return round(asyncio.get_running_loop().time() - VirtualTimeLoop.START, 6)


class Arrivals:
    """Records (time, path) of every request; answers by a rule per path prefix."""

    def __init__(self, status_for: dict[str, int] | None = None) -> None:
        self.log: list[tuple[float, str]] = []
        self.status_for = status_for or {}
        self.app = web.Application()
        self.app.router.add_get("/{tail:.*}", self.handle)

    async def handle(self, request: web.Request) -> web.Response:
        self.log.append((now(), request.path))
        for prefix, status in self.status_for.items():
            if request.path.startswith(prefix):
                return web.Response(status=status, text="no")
        return web.Response(text="<html>ok</html>", content_type="text/html")

    def times(self, prefix: str = "/") -> list[float]:
        return [t for t, path in self.log if path.startswith(prefix)]


def spider_for(base: str, paths: list[str], name: str = "s", **attrs: Any) -> type[Spider]:
    class Generated(Spider):
        def start_requests(self) -> Any:
            for path in paths:
                yield Request(base + path)

        def parse(self, response: Response) -> None:
            return None

    Generated.name = name  # type: ignore[misc]
    for key, value in attrs.items():
        setattr(Generated, key, value)
    return Generated


async def test_retries_arrive_at_the_configured_delays(serve: Any) -> None:
    # 500, not 503: a 503 also backs off the whole slot (see the slot tests)
    site = Arrivals({"/down": 500})
    base = await serve(site.app)
    spider = spider_for(base, ["/down"], retry_delay=[0.3, 0.6])
    # Its one start request fails for good: the crawl's verdict on that is not the subject.
    settings = {"RETRY_TIMES": 2, "FAIL_WHEN_NO_START_SUCCEEDS": False}
    stats = await Crawler(spider, settings, clock=virtual_clock()).run()
    assert site.times("/down") == [0.0, 0.3, 0.9]
    assert stats["retry/attempt_count/1"] == 1
    assert stats["retry/attempt_count/2"] == 1
    assert stats["retry/max_reached"] == 1


async def test_retry_after_header_sets_the_minimum_delay(serve: Any) -> None:
    site = Arrivals()

    async def handle(request: web.Request) -> web.Response:
        await site.handle(request)
        if len(site.log) == 1:
            return web.Response(status=429, headers={"Retry-After": "1"})
        return web.Response(text="ok")

    app = web.Application()
    app.router.add_get("/", handle)
    base = await serve(app)
    spider = spider_for(base, ["/"], retry_delay=[0.0])
    stats = await Crawler(spider, clock=virtual_clock()).run()
    assert site.times() == [0.0, 1.0]
    assert stats["retry/reason_count/HTTP 429"] == 1


async def test_breaker_pauses_then_sends_exactly_the_probes(serve: Any) -> None:
    site = Arrivals({"/": 500})
    base = await serve(site.app)
    spider = spider_for(base, [f"/f{i}" for i in range(40)])
    settings = {
        "RETRY_TIMES": 0,
        "CONCURRENT_REQUESTS": 1,
        "BREAKER_THRESHOLD": 3,
        "BREAKER_PAUSE": 1.0,
        "BREAKER_PROBES": 2,
        "CLOSESPIDER_TIMEOUT": 3.6,
    }
    stats = await Crawler(spider, settings, clock=virtual_clock()).run()
    # 3 failures, a pause of 1 s, 2 probes (which fail), a pause, 2 probes, ...
    assert site.times() == [0.0, 0.0, 0.0, 1.0, 1.0, 2.0, 2.0, 3.0, 3.0]
    assert stats["scheduler/breaker/paused"] == 4
    assert stats["scheduler/breaker/probing"] == 3
    assert (stats["finish_reason"], stats["elapsed_time_seconds"]) == ("closespider_timeout", 3.6)


async def test_rate_limit_holds_over_twenty_seconds(serve: Any) -> None:
    site = Arrivals()
    base = await serve(site.app)
    spider = spider_for(base, [f"/p{i}" for i in range(400)], rate=5, burst=5)
    crawler = Crawler(spider, {"CLOSESPIDER_TIMEOUT": 21.5}, clock=virtual_clock())
    await crawler.run()
    # the bucket starts full: five go at once, then one every 0.2 s until the timeout
    assert site.times() == [0.0] * 5 + [round(0.2 * n, 6) for n in range(1, 108)]


async def test_live_rate_change_applies_from_the_next_token(serve: Any) -> None:
    site = Arrivals()
    base = await serve(site.app)
    spider = spider_for(base, [f"/p{i}" for i in range(1000)])
    crawler = Crawler(spider, {"RATE": 20, "BURST": 1}, clock=virtual_clock())
    task = asyncio.create_task(crawler.run())
    await asyncio.sleep(1.5)  # virtual
    crawler.control.set_rate(2, 1)
    await asyncio.sleep(4.0)  # virtual
    crawler.control.set_rate(40, 1)
    await asyncio.sleep(1.99)  # virtual; stopped just before the token at 7.5
    crawler.stop()
    await task
    # 20/s; from 1.5 s, 2/s (the token taken at 1.5 s is the last at 20/s); from 5.5 s,
    # 40/s: each rate holds from the token after the change
    assert site.times() == (
        [round(0.05 * n, 6) for n in range(31)]
        + [round(1.5 + 0.5 * n, 6) for n in range(1, 9)]
        + [round(5.5 + 0.025 * n, 6) for n in range(1, 80)]
    )


async def test_rate_change_above_the_cap_is_refused(serve: Any) -> None:
    site = Arrivals()
    base = await serve(site.app)
    spider = spider_for(base, [f"/p{i}" for i in range(50)])
    settings = {"RATE": 10, "MAX_RATE": 20, "MAX_BURST": 50}
    crawler = Crawler(spider, settings, clock=virtual_clock())
    task = asyncio.create_task(crawler.run())
    await asyncio.sleep(0.2)  # virtual: the crawl is under way
    with pytest.raises(Exception, match="above MAX_RATE"):
        crawler.control.set_rate(30)
    with pytest.raises(Exception, match="above MAX_BURST"):
        crawler.control.set_rate(10, 100)
    crawler.control.set_rate(20, 20)
    await task
    assert crawler.control.status == "done"


async def test_three_backlogged_projects_share_dispatches() -> None:
    # The shares are the scheduler's: the transport double answers its 2,340 requests,
    # where a server on a socket made this the slowest test of the fast tier.
    order: list[str] = []

    def answer(request: Request) -> str:
        order.append(request.url.split("/")[3])
        return "<html>ok</html>"

    base = "http://shares.test"
    sizes = {"big": 2000, "mid": 300, "small": 40}
    crawlers = [
        Crawler(
            spider_for(base, [f"/{name}/{i}" for i in range(n)], name=name),
            {"CONCURRENT_REQUESTS": 1, "DOWNLOAD_TRANSPORT": MockTransport(answer)},
            clock=virtual_clock(),
        )
        for name, n in sizes.items()
    ]
    await run_crawlers(crawlers)
    assert Counter(order) == sizes
    # while all three have work: up to the small project's last dispatch
    window = order[: max(i for i, name in enumerate(order) if name == "small") + 1]
    shares = {name: window.count(name) / len(window) for name in sizes}
    assert all(0.10 <= share <= 0.34 for share in shares.values()), shares


async def test_config_gives_defaults_to_requests_of_a_callback(serve: Any) -> None:
    site = Arrivals()
    base = await serve(site.app)
    seen: list[tuple[str, int]] = []

    class Configured(Spider):
        name = "configured"
        start_urls = [base + "/"]

        def parse(self, response: Response) -> Any:
            yield Request(base + "/detail", callback=self.detail)
            yield Request(base + "/explicit", callback=self.detail, priority=7)

        @config(priority=3, meta={"kind": "detail"})
        def detail(self, response: Response) -> None:
            seen.append((response.meta["kind"], response.request.priority))

    await Crawler(Configured, clock=virtual_clock()).run()
    assert sorted(seen) == [("detail", 3), ("detail", 7)]


async def test_serve_mode_runs_every_and_recrawls_by_age(serve: Any) -> None:
    site = Arrivals()
    base = await serve(site.app)
    runs = 0

    class Service(Spider):
        name = "service"

        def start_requests(self) -> Any:
            yield Request(base + "/fresh", callback=self.fresh)

        @every(seconds=0.4)
        def tick(self) -> Any:
            nonlocal runs
            runs += 1
            yield Request(base + f"/tick/{runs}")

        @config(age=0.5, auto_recrawl=True)
        def fresh(self, response: Response) -> None:
            return None

        def parse(self, response: Response) -> None:
            return None

    crawler = Crawler(Service, {"CONCURRENT_REQUESTS": 4}, clock=virtual_clock())
    task = asyncio.create_task(run_crawlers([crawler], mode="serve"))
    await asyncio.sleep(2.2)  # virtual
    assert not task.done()  # a service does not end when idle
    crawler.stop()
    await task
    assert runs == 6
    assert site.times("/tick/") == [0.0, 0.4, 0.8, 1.2, 1.6, 2.0]  # @every(seconds=0.4)
    assert site.times("/fresh") == [0.0, 0.5, 1.0, 1.5, 2.0]  # recrawled at age 0.5 s
