"""A link followed from a page in a legacy encoding (windows-1251, GBK...) is requested
with its query percent-encoded in that encoding, as browsers and Scrapy send it; the
server of such a page expects exactly those bytes."""

from __future__ import annotations

from typing import Any
from urllib.parse import unquote_to_bytes

import pytest
from aiohttp import web

from skitter import Crawler, Response, Spider


@pytest.mark.parametrize("charset", ["windows-1251", "gbk", "utf-8"])
async def test_a_followed_links_query_is_sent_in_the_pages_encoding(
    serve: Any, charset: str
) -> None:
    word = "привет" if charset != "gbk" else "你好"
    asked: list[bytes] = []

    async def page(request: web.Request) -> web.Response:
        html = f'<html><a href="/s?q={word}">next</a></html>'
        return web.Response(
            body=html.encode(charset), headers={"Content-Type": f"text/html; charset={charset}"}
        )

    async def search(request: web.Request) -> web.Response:
        asked.append(unquote_to_bytes(request.raw_path.partition("?q=")[2]))
        return web.Response(text="ok")

    app = web.Application()
    app.router.add_get("/", page)
    app.router.add_get("/s", search)
    base = await serve(app)

    class Legacy(Spider):
        name = "legacy"
        start_urls = [base + "/"]

        def parse(self, response: Response) -> Any:
            yield from response.follow_all(css="a", callback=self.done)
            yield response.follow(f"/s?q={word}", callback=self.done, dont_filter=True)

        def done(self, response: Response) -> Any:
            yield {"url": response.url}

    stats = await Crawler(Legacy, {"RETRY_DELAYS": [0.0]}).run()
    assert stats["item_scraped_count"] == 2
    assert asked == [word.encode(charset)] * 2  # the bytes the page's own form would send
