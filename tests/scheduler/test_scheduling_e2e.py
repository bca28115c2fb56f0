"""The scheduler end to end, measured by a local server that records arrivals: retry
delays, the circuit breaker's pause and probes, token-bucket rates (also changed live),
fair share between projects, @config and serve mode (@every, auto-recrawl).

Timing assertions here are behaviour the issue specifies (a rate is a rate); each has a
strict side that cannot flake (a retry never comes early, a paused project sends
nothing) and a generous other side.
"""

from __future__ import annotations

import asyncio
import itertools
import time
from collections import Counter
from typing import Any

import pytest
from aiohttp import web

from skitter import Crawler, Request, Response, Spider, config, every, run_crawlers


class Arrivals:
    """Records (time, path) of every request; answers by a rule per path prefix."""

    def __init__(self, status_for: dict[str, int] | None = None) -> None:
        self.log: list[tuple[float, str]] = []
        self.status_for = status_for or {}
        self.app = web.Application()
        self.app.router.add_get("/{tail:.*}", self.handle)

    async def handle(self, request: web.Request) -> web.Response:
        self.log.append((time.monotonic(), request.path))
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
    stats = await Crawler(spider, {"RETRY_TIMES": 2, "FAIL_WHEN_NO_START_SUCCEEDS": False}).run()
    t = site.times("/down")
    assert len(t) == 3
    gaps = [b - a for a, b in itertools.pairwise(t)]
    assert 0.3 <= gaps[0] < 0.3 + 0.5
    assert 0.6 <= gaps[1] < 0.6 + 0.5
    assert stats["retry/attempt_count/1"] == 1
    assert stats["retry/attempt_count/2"] == 1
    assert stats["retry/max_reached"] == 1


async def test_retry_after_header_sets_the_minimum_delay(serve: Any) -> None:
    hits = 0

    async def handle(request: web.Request) -> web.Response:
        nonlocal hits
        hits += 1
        if hits == 1:
            return web.Response(status=429, headers={"Retry-After": "1"})
        return web.Response(text="ok")

    app = web.Application()
    app.router.add_get("/", handle)
    base = await serve(app)
    spider = spider_for(base, ["/"], retry_delay=[0.0])
    started = time.monotonic()
    stats = await Crawler(spider).run()
    assert hits == 2
    assert time.monotonic() - started >= 1.0
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
    stats = await Crawler(spider, settings).run()
    t = site.times()
    # 3 failures, a pause of >= 1 s, 2 probes (which fail), a pause, 2 probes, ...
    assert len(t) >= 7
    assert t[3] - t[2] >= 1.0
    assert t[4] - t[3] < 0.5
    assert t[5] - t[4] >= 1.0
    assert stats["scheduler/breaker/paused"] >= 2
    assert stats["scheduler/breaker/probing"] >= 2


@pytest.mark.slow
async def test_rate_limit_holds_over_twenty_seconds(serve: Any) -> None:
    site = Arrivals()
    base = await serve(site.app)
    spider = spider_for(base, [f"/p{i}" for i in range(400)], rate=5, burst=5)
    crawler = Crawler(spider, {"CLOSESPIDER_TIMEOUT": 21.5})
    await crawler.run()
    t = site.times()
    assert len(t) >= 100
    start = t[5]  # the bucket starts full: five go at once, then five per second
    window = [x for x in t if start <= x < start + 20]
    assert 95 <= len(window) <= 105, len(window)


async def test_live_rate_change_applies_within_a_second(serve: Any) -> None:
    site = Arrivals()
    base = await serve(site.app)
    spider = spider_for(base, [f"/p{i}" for i in range(1000)])
    crawler = Crawler(spider, {"RATE": 20, "BURST": 1})
    task = asyncio.create_task(crawler.run())
    await asyncio.sleep(1.5)
    changed = time.monotonic()
    crawler.control.set_rate(2, 1)
    await asyncio.sleep(4.0)
    crawler.control.set_rate(40, 1)
    sped_up = time.monotonic()
    await asyncio.sleep(2.0)
    crawler.stop()
    await task
    t = site.times()
    before = [x for x in t if changed - 1.0 <= x < changed]
    slow = [x for x in t if changed + 1.0 <= x < changed + 4.0]
    fast = [x for x in t if sped_up + 1.0 <= x < sped_up + 2.0]
    assert len(before) >= 15  # 20/s before the change
    assert len(slow) <= 8  # 2/s for 3 s, plus slack
    assert len(fast) >= 25  # 40/s again


async def test_rate_change_above_the_cap_is_refused(serve: Any) -> None:
    site = Arrivals()
    base = await serve(site.app)
    spider = spider_for(base, [f"/p{i}" for i in range(50)])
    crawler = Crawler(spider, {"RATE": 10, "MAX_RATE": 20, "MAX_BURST": 50})
    task = asyncio.create_task(crawler.run())
    await asyncio.sleep(0.2)
    with pytest.raises(Exception, match="above MAX_RATE"):
        crawler.control.set_rate(30)
    with pytest.raises(Exception, match="above MAX_BURST"):
        crawler.control.set_rate(10, 100)
    crawler.control.set_rate(20, 20)
    await task
    assert crawler.control.status == "done"


async def test_three_backlogged_projects_share_dispatches(serve: Any) -> None:
    site = Arrivals()
    base = await serve(site.app)
    sizes = {"big": 2000, "mid": 300, "small": 40}
    crawlers = [
        Crawler(
            spider_for(base, [f"/{name}/{i}" for i in range(n)], name=name),
            {"CONCURRENT_REQUESTS": 1},
        )
        for name, n in sizes.items()
    ]
    await run_crawlers(crawlers)
    order = [path.split("/")[1] for _, path in site.log]
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

    await Crawler(Configured).run()
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

    crawler = Crawler(Service, {"CONCURRENT_REQUESTS": 4})
    task = asyncio.create_task(run_crawlers([crawler], mode="serve"))
    await asyncio.sleep(2.2)
    assert not task.done()  # a service does not end when idle
    crawler.stop()
    await task
    assert runs >= 4
    assert len(site.times("/tick/")) >= 4
    assert len(site.times("/fresh")) >= 3  # recrawled every ~0.5 s
