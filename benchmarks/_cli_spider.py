"""The spider a user writes, run by ``_crawl_skitter_cli.py`` through ``skitter crawl``:
items by CSS (with the page's URL, so the parent can count pages per host from the
feed) and ``response.follow`` for every ``<a href>``, as the spider of issue 29's kit."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

from skitter.http import Request, Response
from skitter.spider import Spider


class BenchSpider(Spider):
    name = "bench"

    def __init__(self, url: str, **kwargs: Any) -> None:
        super().__init__(**kwargs)
        self.start_urls = [url]

    def parse(self, response: Response) -> Iterator[dict[str, Any] | Request]:
        url = response.url
        for item in response.css("div.item"):
            yield {
                "url": url,
                "name": item.css(".name::text").get(),
                "price": item.css(".price::text").get(),
            }
        for href in response.css("a::attr(href)").getall():
            if href.startswith(("mailto:", "javascript:")):
                continue
            yield response.follow(href, callback=self.parse)
