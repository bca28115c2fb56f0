"""Spider contracts checked through a real crawl probe, on a site answered in memory
(``MockTransport``)."""

from __future__ import annotations

import unittest
from typing import Any

import pytest

from skitter import Crawler, Request, Spider
from skitter._components import merge_components
from skitter.contracts import Contract, ContractsManager
from skitter.exceptions import ConfigError, ContractFail
from skitter.testing import MockResponse, MockTransport

BASE = "http://site.test"


def _site(request: Request) -> Any:
    if request.parsed_url.path == "/page":
        return '<html><h1>Title</h1><a href="/a">a</a><a href="/b">b</a></html>'
    return MockResponse.text("gone", 404)


class HasHeading(Contract):
    """``@has_heading``: the page has an <h1> (a custom contract with a pre-hook)."""

    name = "has_heading"

    def pre_process(self, response: Any) -> None:
        if not response.css("h1"):
            raise ContractFail("no <h1> on the page")


def make_spider(base: str) -> type[Spider]:
    class Checked(Spider):
        name = "checked"

        def parse(self, response: Any) -> Any:
            yield {"title": response.css("h1::text").get(), "url": response.url}
            yield from response.follow_all(css="a")

        async def parse_async(self, response: Any, kind: str) -> Any:
            yield {"title": kind, "flag": response.meta.get("flag")}

        def parse_short(self, response: Any) -> Any:
            yield {"title": "x"}

        def parse_broken(self, response: Any) -> Any:
            raise RuntimeError("boom")

        def no_url(self, response: Any) -> Any:
            """@returns items 1"""

    Checked.parse.__doc__ = f"""
        @url {base}/page
        @has_heading
        @returns items 1 1
        @returns requests 2
        @scrapes title url
        """
    Checked.parse_async.__doc__ = f"""
        @url {base}/page
        @cb_kwargs {{"kind": "async"}}
        @meta {{"flag": 7}}
        @returns items 1
        @scrapes title flag
        """
    Checked.parse_short.__doc__ = f"""@url {base}/page
        @returns items 2 3
        @scrapes title price
        """
    Checked.parse_broken.__doc__ = f"@url {base}/page\n@returns items 0"
    return Checked


async def _check(spider_cls: type[Spider], methods: list[str] | None = None) -> unittest.TestResult:
    own = {"SPIDER_CONTRACTS": {HasHeading: 10}, "DOWNLOAD_TRANSPORT": MockTransport(_site)}
    crawler = Crawler(spider_cls, own)
    settings = crawler.settings
    manager = ContractsManager(
        merge_components(settings["SPIDER_CONTRACTS_BASE"], settings["SPIDER_CONTRACTS"])
    )
    if methods is not None:
        manager.tested_methods_from_spidercls = lambda cls: methods  # type: ignore[method-assign]
    result = unittest.TestResult()
    async with crawler.probe() as probe:
        await manager.check(probe.spider, probe, result)
    return result


def _labels(pairs: list[tuple[Any, str]]) -> list[str]:
    return [str(case) for case, _ in pairs]


async def test_passing_contracts_each_count_once() -> None:
    base = BASE
    result = await _check(make_spider(base), ["parse", "parse_async"])
    assert result.errors == [] and result.failures == [], result.errors + result.failures
    # parse: has_heading pre, returns x2, scrapes post; parse_async: returns, scrapes
    assert result.testsRun == 6


async def test_failed_checks_are_failures_with_scrapy_messages() -> None:
    base = BASE
    result = await _check(make_spider(base), ["parse_short"])
    assert _labels(result.failures) == [
        "[checked] parse_short (@returns post-hook)",
        "[checked] parse_short (@scrapes post-hook)",
    ]
    messages = "".join(trace for _, trace in result.failures)
    assert "Returned 1 items, expected 2..3" in messages
    assert "Missing fields: price" in messages


async def test_a_callback_that_raises_is_an_error() -> None:
    base = BASE
    result = await _check(make_spider(base), ["parse_broken"])
    assert _labels(result.errors) == ["[checked] parse_broken (callback)"]
    assert "boom" in result.errors[0][1]


async def test_a_page_the_spider_would_not_get_is_an_errback_error() -> None:
    base = BASE
    spider = make_spider(base)
    spider.parse.__doc__ = f"@url {base}/missing\n@returns items 0"
    result = await _check(spider, ["parse"])
    assert _labels(result.errors) == ["[checked] parse (errback)"]
    assert "HttpError" in result.errors[0][1]


async def test_unknown_contracts_and_callbacks_without_url() -> None:
    base = BASE
    spider = make_spider(base)
    spider.parse.__doc__ = f"@url {base}/page\n@nonesuch 1"
    result = await _check(spider, ["parse", "no_url"])
    assert _labels(result.errors) == ["[checked] parse (contract)"]
    assert "unknown contract @nonesuch" in result.errors[0][1]
    assert result.testsRun == 0  # no_url has no @url: not checked, as in Scrapy


def test_tested_methods_are_those_with_contract_lines() -> None:
    manager = ContractsManager([])
    found = manager.tested_methods_from_spidercls(make_spider("http://127.0.0.1:1"))
    assert found == ["no_url", "parse", "parse_async", "parse_broken", "parse_short"]


def test_sample_request_from_the_contracts() -> None:
    spider = make_spider("http://127.0.0.1:1")()
    settings = Crawler(type(spider)).settings
    manager = ContractsManager(merge_components(settings["SPIDER_CONTRACTS_BASE"], {}))
    request = manager.from_method(spider.parse_async)
    assert isinstance(request, Request)
    assert request.url == "http://127.0.0.1:1/page"
    assert request.cb_kwargs == {"kind": "async"}
    assert request.meta == {"flag": 7}
    assert request.dont_filter
    with pytest.raises(ConfigError, match="has_heading"):
        manager.from_method(spider.parse)  # not in this manager's contracts


def test_a_builtin_contract_can_be_switched_off() -> None:
    settings = Crawler(
        Spider, {"SPIDER_CONTRACTS": {"skitter.contracts.default.ScrapesContract": None}}
    ).settings
    names = [
        c.name
        for c in merge_components(settings["SPIDER_CONTRACTS_BASE"], settings["SPIDER_CONTRACTS"])
    ]
    assert names == ["url", "cb_kwargs", "meta", "returns"]


def test_contract_classes_are_checked_at_start() -> None:
    with pytest.raises(ConfigError, match="not a Contract subclass"):
        ContractsManager([dict])  # type: ignore[list-item]

    class Nameless(Contract):
        pass

    with pytest.raises(ConfigError, match="has no name"):
        ContractsManager([Nameless])
