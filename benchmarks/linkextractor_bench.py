"""LinkExtractor cost per page, against the floor and against Scrapy's, in one run.

A CrawlSpider runs its rules' extractors on every page, so their cost is part of the
crawl's. Three ways to get a page's links are timed on the same pages (already parsed:
a callback parses the page anyway, and the extractor reuses that tree):

- floor: ``response.css("a::attr(href)")`` and ``response.urljoin`` on each, what a
  hand-written ``parse`` pays, with no filtering at all;
- skitter: ``LinkExtractor(allow=...).extract_links(response)`` (text, nofollow,
  IGNORED_EXTENSIONS, safe URLs, unique);
- scrapy: Scrapy's ``LinkExtractor`` on an ``HtmlResponse`` of the same bytes (skipped
  when Scrapy is not installed: ``pip install -e '.[bench]'``).

    PYTHONPATH=src .venv/bin/python benchmarks/linkextractor_bench.py [--pages 200] [--links 150]

Prints microseconds per page and per link, and each one's ratio to the floor.
"""

from __future__ import annotations

import argparse
import random
import timeit
from collections.abc import Callable
from typing import Any

from skitter.http import Response
from skitter.linkextractors import LinkExtractor


def pages(count: int, links: int, seed: int) -> list[bytes]:
    rng = random.Random(seed)
    out = []
    for _ in range(count):
        anchors = []
        for i in range(links):
            kind = rng.random()
            if kind < 0.6:
                href = f"/cat/{rng.randint(0, 99)}/item-{rng.randint(0, 10**6)}.html?ref=list&p={i}"
            elif kind < 0.8:
                href = f"../related/{rng.randint(0, 10**4)}.html"
            elif kind < 0.9:
                href = f"/static/img-{i}.jpg"
            else:
                href = f"https://other.example.org/{rng.randint(0, 999)}#top"
            anchors.append(f'<li><a href="{href}">Item {i} <b>{rng.randint(0, 9)}</b></a></li>')
        text = "lorem ipsum " * 400
        html = f"<html><body><p>{text}</p><ul>{''.join(anchors)}</ul></body></html>"
        out.append(html.encode())
    return out


def best(run: Callable[[], Any], repeat: int = 5) -> float:
    return min(timeit.repeat(run, number=1, repeat=repeat))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--pages", type=int, default=200)
    parser.add_argument("--links", type=int, default=150)
    parser.add_argument("--seed", type=int, default=1)
    args = parser.parse_args()
    bodies = pages(args.pages, args.links, args.seed)
    url = "http://shop.example.com/cat/1/list.html"
    responses = [Response(url, headers={"Content-Type": "text/html"}, body=b) for b in bodies]
    for response in responses:
        response.selector  # noqa: B018 - parsed once, as the callback would have
    extractor = LinkExtractor(allow=r"/cat/|/related/")

    def floor() -> None:
        for r in responses:
            [r.urljoin(h) for h in r.css("a::attr(href)").getall()]

    def ours() -> None:
        for r in responses:
            extractor.extract_links(r)

    results = {"floor": best(floor), "skitter": best(ours)}
    try:
        from scrapy.http import HtmlResponse
        from scrapy.linkextractors import LinkExtractor as ScrapyLinkExtractor
    except ImportError:
        print("scrapy not installed: its extractor is skipped")
    else:
        theirs = ScrapyLinkExtractor(allow=r"/cat/|/related/")
        scrapy_responses = [HtmlResponse(url, body=b, encoding="utf-8") for b in bodies]
        for response in scrapy_responses:
            response.selector  # noqa: B018

        def scrapy_run() -> None:
            for r in scrapy_responses:
                theirs.extract_links(r)

        results["scrapy"] = best(scrapy_run)
    links = args.pages * args.links
    for name, seconds in results.items():
        per_page, per_link = seconds / args.pages * 1e6, seconds / links * 1e6
        ratio = seconds / results["floor"]
        print(
            f"{name:8} {per_page:8.0f} us/page {per_link:6.2f} us/link  x{ratio:.2f} of the floor"
        )


if __name__ == "__main__":
    main()
