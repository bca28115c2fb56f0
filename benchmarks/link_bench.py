"""The cost of a page's callback and of each link it follows, without the network.

``crawl_bench.py`` measures whole crawls, and on a shared 2-CPU machine its wall-clock
figures move with the load. This measures the part of skitter's cost that grows with
the links on a page, in CPU time, in one process: every page of a generated site (see
``_sitegen.py``; ``--links 27`` for a link-heavy one) is handed, as a response, to the
benchmark spider's callback through the crawl's own components (``Crawler.build()``:
spider middlewares, offsite, depth and referer filters, the scheduler and its memory
frontier). The callback is crawl_bench's: items by ``response.css`` and every link by
``follow_all``. Pages run in crawl order, so nearly every link is a duplicate by the
time it is followed, as in a real crawl.

In the same run, the floor: what the raw aiohttp + parsel loop does per page (a parsel
Selector, the same items, ``urljoin`` and a ``seen`` set), and a parse-only pass (the
Selector and the items: what any parsel crawler pays). It prints CPU microseconds per
page and per link for each, skitter's extra cost per link over the raw loop, and
skitter/raw, the best (least CPU) of ``--runs`` interleaved rounds: other processes
only ever add to a round's CPU time (cache misses, migrations), so the least is the
steadiest on a shared machine, as ``timeit`` reports::

    PYTHONPATH=src .venv/bin/python benchmarks/link_bench.py --links 27
    PYTHONPATH=src .venv/bin/python benchmarks/link_bench.py --pages 500 --runs 3
"""

from __future__ import annotations

import argparse
import asyncio
import tempfile
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any
from urllib.parse import urldefrag, urljoin

from _sitegen import LINKS, generate_site
from parsel import Selector

from skitter.crawler import Crawler
from skitter.engine._scraper import Scraper
from skitter.http import HtmlResponse, Request, Response
from skitter.spider import Spider

BASE = "http://127.0.0.1:8000"


class LinkSpider(Spider):
    name = "links"
    allowed_domains = ["127.0.0.1"]

    def parse(self, response: Response) -> Iterator[dict[str, Any] | Request]:
        for item in response.css("div.item"):
            yield {"name": item.css(".name::text").get(), "price": item.css(".price::text").get()}
        yield from response.follow_all(css="a::attr(href)")


def load_pages(pages: int, links: int) -> list[tuple[str, bytes]]:
    """The site's pages as (URL, body), in page order (the crawl's order)."""
    with tempfile.TemporaryDirectory(prefix="skitter-linkbench-") as tmp:
        root = Path(tmp)
        generate_site(root, pages, 1, links=links)
        files = sorted((root / "p").glob("*/*.html"))
        return [(BASE + "/" + str(f.relative_to(root)), f.read_bytes()) for f in files]


def run_skitter(pages: list[tuple[str, bytes]]) -> tuple[float, dict[str, Any]]:
    """CPU seconds for every page's callback through the crawl's components."""
    settings = {"LOG_LEVEL": "WARNING", "STATS_DUMP": False}
    crawler = Crawler(LinkSpider, settings=settings)
    project = crawler.build()

    async def enqueue(project: Any, requests: list[Request]) -> None:
        await project.scheduler.enqueue(requests)

    scraper = Scraper(enqueue, lambda project: None)
    headers = {"Content-Type": "text/html; charset=utf-8"}

    async def go() -> float:
        await project.scheduler.enqueue([Request(pages[0][0])])
        started = time.process_time()
        for url, body in pages:
            response = HtmlResponse(url, body=body, headers=headers, request=Request(url))
            await scraper.handle_response(project, response)
        return time.process_time() - started

    cpu = asyncio.run(go())
    return cpu, crawler.stats.to_dict()


def run_raw(pages: list[tuple[str, bytes]], follow: bool = True) -> float:
    """CPU seconds for the raw loop's work per page (crawl_bench's _crawl_raw.py)."""
    seen = {pages[0][0]}
    queue: list[str] = []
    started = time.process_time()
    for url, body in pages:
        selector = Selector(text=body.decode("utf-8"))
        for item in selector.css("div.item"):
            _ = {"name": item.css(".name::text").get(), "price": item.css(".price::text").get()}
        if follow:
            for href in selector.css("a::attr(href)").getall():
                link = urldefrag(urljoin(url, href))[0]
                if link not in seen:
                    seen.add(link)
                    queue.append(link)
    return time.process_time() - started


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--pages", type=int, default=2000)
    parser.add_argument("--links", type=int, default=LINKS)
    parser.add_argument("--runs", type=int, default=7, help="interleaved rounds (best)")
    args = parser.parse_args()
    pages = load_pages(args.pages, args.links)
    links = sum(body.count(b"<a href=") for _, body in pages)
    figures: dict[str, list[float]] = {"skitter": [], "raw": [], "parse only": []}
    stats: dict[str, Any] = {}
    for _ in range(args.runs):
        cpu, stats = run_skitter(pages)
        figures["skitter"].append(cpu)
        figures["raw"].append(run_raw(pages))
        figures["parse only"].append(run_raw(pages, follow=False))
    med = {name: min(values) for name, values in figures.items()}
    n = len(pages)
    print(
        f"{n} pages, {links / n:.1f} links a page, {stats.get('dupefilter/filtered', 0)} "
        f"duplicates, {stats.get('scheduler/enqueued', 0)} queued; best of {args.runs} rounds"
    )
    print(f"{'':<12}{'us/page':>10}{'us/link':>10}")
    for name, cpu in med.items():
        print(f"{name:<12}{cpu / n * 1e6:>10.0f}{cpu / links * 1e6:>10.2f}")
    links_only = {name: med[name] - med["parse only"] for name in ("skitter", "raw")}
    print(
        f"per link beyond parsing: skitter {links_only['skitter'] / links * 1e6:.2f} us, "
        f"raw {links_only['raw'] / links * 1e6:.2f} us"
    )
    print(f"skitter/raw CPU per page: {med['skitter'] / med['raw']:.2f}x")
    each = ", ".join(
        f"{s / r:.2f}" for s, r in zip(figures["skitter"], figures["raw"], strict=True)
    )
    print(f"skitter/raw, round by round: {each}")


if __name__ == "__main__":
    main()
