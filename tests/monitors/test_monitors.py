"""The monitors: each built-in against stats made by hand, a project's own (a function
or a class, fail or warn), refusals at start, periodic runs on virtual time, and the
item count compared with the last run remembered in the job directory."""

from __future__ import annotations

import asyncio
import json
from pathlib import Path
from typing import Any

import pytest
from aiohttp import web

from skitter import ConfigError, Crawler, Request, Spider
from skitter.exceptions import MonitorsFailed
from skitter.monitors import MonitorFailed, MonitorResult, Run
from skitter.monitors._base import evaluate
from skitter.monitors._builtin import (
    Bans,
    ErrorRate,
    FieldCoverage,
    FinishReason,
    HttpCodes,
    ItemCountChange,
    StatLimit,
)
from skitter.monitors._history import RunRecord
from skitter.testing import VirtualTimeLoop, virtual_clock

from .conftest import Serve


def run_of(stats: dict[str, Any], **kw: Any) -> Run:
    return Run(spider=None, stats=stats, settings={}, final=True, elapsed=10.0, **kw)


MIN_ITEMS = StatLimit("min_items", "item_scraped_count", ">=", 5)
COVERAGE = FieldCoverage({"Product/price": 0.9, "Product/offer/price": 0.5})
COVERAGE_STATS = {
    "coverage/items/Product": 10,
    "coverage/items/dict": 10,
    "coverage/fields/Product/price": 9,
    "coverage/fields/Product/offer/price": 5,
    "coverage/fields/dict/price": 2,
}


@pytest.mark.parametrize(
    ("monitor", "stats", "status", "message"),
    [
        (MIN_ITEMS, {"item_scraped_count": 5}, "passed", ""),
        (
            MIN_ITEMS,
            {"item_scraped_count": 4},
            "failed",
            "item_scraped_count is 4, fewer than 5",
        ),
        (StatLimit("max_retries", "retry/count", "<=", 3), {}, "passed", ""),
        (
            ErrorRate(0.1),
            {
                "downloader/response_count": 8,
                "downloader/exception_count": 2,
                "downloader/response_status_count/200": 7,
                "downloader/response_status_count/404": 1,
            },
            "failed",
            "3 of 10 downloads failed (30.0 %, at most 10.0 %)",
        ),
        (ErrorRate(0.1), {}, "passed", ""),
        (FinishReason(["finished"]), {"finish_reason": "finished"}, "passed", ""),
        (
            FinishReason(["finished"]),
            {"finish_reason": "closespider_timeout"},
            "failed",
            "finished with 'closespider_timeout', not one of ['finished']",
        ),
        (
            Bans(2, [403, 429]),
            {
                "downloader/response_status_count/403": 2,
                "downloader/response_status_count/429": 1,
            },
            "failed",
            "3 responses were blocks (2 x 403, 1 x 429), more than 2",
        ),
        (COVERAGE, COVERAGE_STATS, "passed", ""),
        (
            FieldCoverage({"price": 0.6}),
            COVERAGE_STATS,
            "failed",
            "price filled in 55.0 % of 20 items (min 60.0 %)",
        ),
        (
            HttpCodes({500: 0, 404: {"max_count": 10, "max_percentage": 0.1}}),
            {
                "downloader/request_count": 50,
                "downloader/response_status_count/404": 6,
            },
            "failed",
            "6 responses with status 404 (at most 5)",
        ),
    ],
)
def test_built_in_monitors(monitor: Any, stats: dict[str, Any], status: str, message: str) -> None:
    result = evaluate(monitor, run_of(stats))
    assert (result.status, result.message) == (status, message)


def test_item_count_change_compares_with_the_last_run() -> None:
    monitor = ItemCountChange(0.2)
    last = RunRecord("shop", 1.0, "finished", 100)
    assert evaluate(monitor, run_of({"item_scraped_count": 81}, previous=last)).status == "passed"
    result = evaluate(monitor, run_of({"item_scraped_count": 10}, previous=last))
    assert result.message == (
        "10 items, -90.0 % from the 100 of the last run (at most 20 % either way)"
    )
    assert evaluate(monitor, run_of({"item_scraped_count": 10})).status == "skipped"


def test_what_a_projects_check_returns_or_raises() -> None:
    class Check:
        name, level = "mine", "warn"

        def __init__(self, answer: Any) -> None:
            self.answer = answer

        def check(self, run: Run) -> Any:
            if isinstance(self.answer, BaseException):
                raise self.answer
            return self.answer

    def status(answer: Any) -> tuple[str, str, str]:
        result = evaluate(Check(answer), run_of({}))
        return result.status, result.message, result.level

    assert status(None) == ("passed", "", "warn")
    assert status(True) == ("passed", "", "warn")
    assert status(False) == ("failed", "returned False", "warn")
    assert status("too few prices") == ("failed", "too few prices", "warn")
    assert status(MonitorFailed("no")) == ("failed", "no", "warn")
    assert status(AssertionError("assert")) == ("failed", "assert", "warn")
    assert status(KeyError("x")) == ("error", "KeyError: 'x'", "warn")
    assert status(MonitorResult("mine", "skipped", "later")) == ("skipped", "later", "fail")
    assert status(3)[0] == "error"


def prices_positive(run: Run) -> None:
    assert run.stats.get("item_scraped_count", 0) > 3, "fewer than 4 items"


class SameName:
    name = "prices_positive"

    def check(self, run: Run) -> None:
        return None


class Items(Spider):
    name = "items"

    async def start(self) -> Any:
        for n in range(3):
            yield {"n": n, "price": n or None}


async def test_a_projects_monitor_fails_the_run(tmp_path: Path) -> None:
    crawler = Crawler(Items, {"MONITORS": [prices_positive], "MONITOR_REPORT_DIR": str(tmp_path)})
    with pytest.raises(MonitorsFailed, match="prices_positive: fewer than 4 items") as raised:
        await crawler.run()
    assert raised.value.stats["monitors/status"] == "failed"
    assert raised.value.stats["item_scraped_count"] == 3
    assert crawler.control.status == "monitors_failed"
    assert crawler.failure is None  # the crawl did its work: its output fails


async def test_a_warning_monitor_does_not_fail_the_run(tmp_path: Path) -> None:
    crawler = Crawler(
        Items,
        {
            "MONITORS": {prices_positive: "warn"},
            "MONITOR_FIELD_COVERAGE": {"price": 0.5},
            "MONITOR_REPORT_DIR": str(tmp_path),
        },
    )
    stats = await crawler.run()
    assert stats["monitors/status"] == "warned"
    assert stats["monitors/warned"] == 1 and stats["monitors/passed"] == 1
    assert crawler.control.status == "done"


@pytest.mark.parametrize(
    ("settings", "message"),
    [
        ({"MONITOR_FIELD_COVERAGE": {"price": 90}}, r"a fraction from 0 to 1 \(0.9 for 90 %\)"),
        ({"MONITOR_MIN_ITEMS": -1}, "MONITOR_MIN_ITEMS must be a whole number"),
        ({"MONITOR_LEVELS": {"min_items": "warning"}}, "'fail' or 'warn'"),
        ({"MONITOR_LEVELS": {"coverage": "warn"}}, "no built-in monitor 'coverage'"),
        ({"MONITORS": {"no.such.check": "fail"}}, "cannot import 'no.such'"),
        ({"MONITORS": [prices_positive, SameName]}, "two monitors named"),
        ({"MONITOR_MIN_ITEMS": 1, "MONITOR_INTERVAL": 60}, "no monitor runs during the crawl"),
        ({"MONITOR_ITEM_COUNT_CHANGE": 0.2}, "job directory"),
        ({"ALERT_WEBHOOKS": ["http://127.0.0.1:9/h"]}, "no monitor is set"),
        ({"MONITOR_MIN_ITEMS": 1, "ALERT_ON": "sometimes"}, "ALERT_ON must be"),
        ({"MONITOR_MIN_ITEMS": 1, "ALERT_WEBHOOKS": ["ftp://host/h"]}, "not an http"),
        (
            {"MONITOR_MIN_ITEMS": 1, "MAIL_TLS": True, "MAIL_SSL": True, "ALERT_EMAIL_TO": ["a@b"]},
            "exclude",
        ),
    ],
)
def test_a_bad_monitor_setting_is_refused_at_start(settings: dict[str, Any], message: str) -> None:
    with pytest.raises(ConfigError, match=message):
        Crawler(Items, settings).build()


async def test_a_webhooks_secret_is_never_shown() -> None:
    url = "https://hooks.slack.com/services/T000/B000/SECRETSECRET"
    crawler = Crawler(Items, {"ALERT_WEBHOOKS": [url]})
    assert "SECRET" not in repr(crawler.settings)
    with pytest.raises(ConfigError) as raised:
        crawler.build()
    assert "SECRET" not in str(raised.value)


async def test_item_count_change_reads_the_job_directorys_history(tmp_path: Path) -> None:
    class Some(Spider):
        name = "some"
        count = 10

        async def start(self) -> Any:
            for n in range(self.count):
                yield {"n": n}

    settings = {"MONITOR_ITEM_COUNT_CHANGE": 0.3, "MONITOR_REPORT_DIR": str(tmp_path)}
    first = await Crawler(Some, settings, job_dir=tmp_path / "job", job_mode="fresh").run()
    assert first["monitors/skipped"] == 1  # nothing to compare with yet
    Some.count = 8
    second = await Crawler(Some, settings, job_dir=tmp_path / "job", job_mode="fresh").run()
    assert second["monitors/status"] == "passed"
    Some.count = 2
    with pytest.raises(MonitorsFailed, match=r"2 items, -75.0 % from the 8 of the last run"):
        await Crawler(Some, settings, job_dir=tmp_path / "job", job_mode="fresh").run()
    lines = (tmp_path / "job" / "runs.jsonl").read_text().splitlines()
    runs = [(r["items"], r["status"]) for r in map(json.loads, lines)]
    assert runs == [(10, "passed"), (8, "passed"), (2, "failed")]


@pytest.mark.virtual_time
async def test_periodic_runs_are_on_the_crawls_clock(serve: Serve, tmp_path: Path) -> None:
    """MONITOR_INTERVAL = 30 over a crawl of 100 virtual seconds: the upper bounds and
    the periodic project monitors run at 30, 60 and 90 s exactly, then once at the end."""
    seen: list[tuple[float, bool]] = []

    def watch(run: Run) -> None:
        seen.append((round(run.elapsed, 6), run.final))

    watch.periodic = True  # type: ignore[attr-defined]

    async def slow(request: web.Request) -> web.Response:
        await asyncio.sleep(10)  # virtual: a slow page
        return web.Response(text="<html>ok</html>", content_type="text/html")

    app = web.Application()
    app.router.add_get("/{n}", slow)
    base = await serve(app)

    class Slow(Spider):
        name = "slow"
        custom_settings = {"CONCURRENT_REQUESTS": 1, "DOWNLOAD_DELAY": 0}

        async def start(self) -> Any:
            for n in range(10):
                yield Request(f"{base}/{n}")

        def parse(self, response: Any) -> Any:
            yield {"url": response.url}

    crawler = Crawler(
        Slow,
        {"MONITORS": [watch], "MONITOR_INTERVAL": 30, "MONITOR_REPORT_DIR": str(tmp_path)},
        clock=virtual_clock(),
    )
    start = asyncio.get_running_loop().time()
    stats = await crawler.run()
    took = round(asyncio.get_running_loop().time() - start, 6)
    assert took >= 100
    assert seen[:3] == [(30.0, False), (60.0, False), (90.0, False)]
    assert seen[-1][1] is True and len(seen) == 4
    assert stats["monitors/periodic_runs"] == 3
    assert VirtualTimeLoop.START > 0


class StockMonitor:
    """A project's monitor class with a setting of its own, read in from_crawler."""

    name = "stock"

    def __init__(self, minimum: int) -> None:
        self.minimum = minimum

    @classmethod
    def from_crawler(cls, crawler: Any) -> StockMonitor:
        return cls(crawler.settings.getint("STOCK_MIN_ITEMS"))

    def check(self, run: Run) -> str | None:
        count = run.stats.get("item_scraped_count", 0)
        return None if count >= self.minimum else f"{count} < {self.minimum}"


async def test_a_monitor_classs_own_setting_is_declared_by_reading_it(tmp_path: Path) -> None:
    settings = {"MONITORS": [StockMonitor], "STOCK_MIN_ITEMS": 3}
    settings["MONITOR_REPORT_DIR"] = str(tmp_path)
    stats = await Crawler(Items, settings).run()
    assert stats["monitors/passed"] == 1
    with pytest.raises(ConfigError, match="STOCK_MIN_ITEM"):
        Crawler(Items, {"MONITORS": [StockMonitor], "STOCK_MIN_ITEM": 3})
