"""End to end: a compressed page cut mid-stream is a failed, retried download (never a
page with what arrived of it), and headers too large fail once, not retried."""

from __future__ import annotations

import gzip
from collections import Counter
from typing import Any

import brotli
from aiohttp import web

from skitter import Crawler, Request, Response, Spider

FAST = {"RETRY_DELAYS": [0.0], "CONCURRENT_REQUESTS": 4}
PAGE = (
    b"<html><body>" + b"<p>a paragraph of a long page</p>" * 50_000 + b"<h1>end</h1></body></html>"
)


def site(cut_first: int) -> tuple[web.Application, Counter[str]]:
    """``/br`` and ``/gzip`` answer their first ``cut_first`` hits with half the
    compressed page (a complete HTTP message: the Content-Length is the cut one)."""
    hits: Counter[str] = Counter()
    bodies = {"br": brotli.compress(PAGE), "gzip": gzip.compress(PAGE)}

    async def page(request: web.Request) -> web.Response:
        coding = request.match_info["coding"]
        hits[coding] += 1
        body = bodies[coding]
        if hits[coding] <= cut_first:
            body = body[: len(body) // 2]
        return web.Response(
            body=body, headers={"Content-Encoding": coding, "Content-Type": "text/html"}
        )

    async def big_headers(request: web.Request) -> web.Response:
        hits["headers"] += 1
        return web.Response(
            text="<h1>end</h1>", headers={f"X-{i}": "v" * 30_000 for i in range(10)}
        )

    app = web.Application()
    app.router.add_get("/headers", big_headers)
    app.router.add_get("/{coding}", page)
    return app, hits


class Pages(Spider):
    name = "pages"
    paths: tuple[str, ...] = ()
    base = ""
    failures: list[BaseException]
    items: list[Any]

    def start_requests(self) -> Any:
        for path in self.paths:
            yield Request(self.base + path, errback=self.failed)

    def parse(self, response: Response) -> Any:
        yield {
            "url": response.url,
            "size": len(response.body),
            "end": response.css("h1::text").get(),
        }

    def failed(self, failure: Any) -> None:
        type(self).failures.append(failure.value)


class Keep:
    items: list[Any] = []

    def process_item(self, item: Any, spider: Spider) -> Any:
        Keep.items.append(item)
        return item


def spider(base: str, *paths: str) -> type[Pages]:
    return type("Cut", (Pages,), {"base": base, "paths": paths, "failures": []})


async def test_a_cut_page_is_retried_until_it_arrives_whole(serve: Any) -> None:
    app, hits = site(cut_first=2)
    base = await serve(app)
    Keep.items = []
    stats = await Crawler(spider(base, "/br", "/gzip"), {**FAST, "ITEM_PIPELINES": {Keep: 1}}).run()
    assert hits["br"] == hits["gzip"] == 3
    assert sorted(item["size"] for item in Keep.items) == [len(PAGE), len(PAGE)]
    assert all(item["end"] == "end" for item in Keep.items)
    assert stats["downloader/exception_type_count/ConnectionLost"] == 4
    assert stats["retry/count"] == 4
    assert stats["retry/reason_count/ConnectionLost"] == 4


async def test_a_page_always_cut_fails_after_its_retries_and_never_reaches_parse(
    serve: Any,
) -> None:
    app, hits = site(cut_first=100)
    base = await serve(app)
    Keep.items = []
    cut = spider(base, "/br")
    stats = await Crawler(cut, {**FAST, "RETRY_TIMES": 2, "ITEM_PIPELINES": {Keep: 1}}).run()
    assert hits["br"] == 3
    assert Keep.items == []
    assert stats["downloader/exception_type_count/ConnectionLost"] == 3
    assert stats["retry/max_reached"] == 1
    assert [type(f).__name__ for f in cut.failures] == ["ConnectionLost"]
    assert "body truncated" in str(cut.failures[0])


async def test_headers_too_large_fail_once_and_are_not_retried(serve: Any) -> None:
    app, hits = site(cut_first=0)
    base = await serve(app)
    big = spider(base, "/headers")
    stats = await Crawler(big, FAST).run()
    assert hits["headers"] == 1
    assert stats["downloader/exception_type_count/ResponseTooLarge"] == 1
    assert "retry/count" not in stats
    assert [type(f).__name__ for f in big.failures] == ["ResponseTooLarge"]
