"""The crawl the cost guard measures: ``skitter crawl`` with a JSON-lines feed, in process.

Run as ``python _guard_crawl.py SITE_DIR OUT_DIR FIRST LAST`` (by ``cost_guard.py``,
under callgrind): the CLI's own ``main`` crawls the site generated in SITE_DIR with the
spider below, as a user runs it, except for two things that make the count the same on
every run. The network is ``MockTransport`` answering from the site's files in memory
(no sockets, whose timing varies), and the loop is ``VirtualTimeLoop`` (the progress and
stats timers fire at the same points of the crawl, not after so many real seconds, which
under valgrind would be many more of them).

When the spider starts parsing page FIRST it calls the guard's probe (a small shared
library, ``SKITTER_GUARD_PROBE``, that issues callgrind's client requests) to start
counting, and at page LAST to write the count and stop: callgrind counts the steady
state of the crawl only, and runs the imports, start-up and close uninstrumented, which
is many times faster.
"""

from __future__ import annotations

import asyncio
import ctypes
import json
import os
import sys
from collections.abc import Coroutine, Iterator
from pathlib import Path
from typing import Any, TypeVar

from skitter.http import Request, Response
from skitter.spider import Spider
from skitter.testing import MockResponse, MockTransport, VirtualTimeLoop

T = TypeVar("T")
_SITE_ENV = "SKITTER_GUARD_SITE"
_MARKS_ENV = "SKITTER_GUARD_MARKS"
_PROBE_ENV = "SKITTER_GUARD_PROBE"


def _site_pages(root: Path) -> dict[str, MockResponse]:
    """Every page of the generated site by URL, on every origin of its manifest (a page
    linked through the wrong port would be a 404 and show in the page count)."""
    manifest = json.loads((root / "manifest.json").read_text())
    origins = [f"http://{manifest['names'][0]}:{port}" for port in manifest["ports"]]
    pages: dict[str, MockResponse] = {}
    for path in sorted((root / "p").rglob("*.html")):
        url = f"{origins[int(path.stem) % len(origins)]}/{path.relative_to(root).as_posix()}"
        pages[url] = MockResponse.html(path.read_text())
    return pages


def _handler(pages: dict[str, MockResponse]) -> Any:
    def answer(request: Request) -> MockResponse | int:
        return pages.get(request.url.split("#", 1)[0], 404)

    return answer


#: DOWNLOAD_TRANSPORT (as a dotted path): the site's pages from memory. Built on import
#: when the site's directory is given, so the spider file alone stays importable.
TRANSPORT = (
    MockTransport(_handler(_site_pages(Path(os.environ[_SITE_ENV]))))
    if _SITE_ENV in os.environ
    else None
)


class GuardSpider(Spider):
    """The spider of the bench kit: items by CSS, every ``<a href>`` followed."""

    name = "guard"

    def __init__(self, url: str, **kwargs: Any) -> None:
        super().__init__(**kwargs)
        self.start_urls = [url]
        first, last = (int(v) for v in os.environ.get(_MARKS_ENV, "0,0").split(","))
        probe = ctypes.CDLL(os.environ[_PROBE_ENV]) if _PROBE_ENV in os.environ else None
        self.marks = {first: probe and probe.guard_start, last: probe and probe.guard_stop}
        self.pages = 0

    def parse(self, response: Response) -> Iterator[dict[str, Any] | Request]:
        self.pages += 1
        mark = self.marks.get(self.pages)
        if mark is not None:
            mark()
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


def _on_virtual_time(coro: Coroutine[Any, Any, T], loop: object = "auto") -> T:
    """The CLI's loop runner, on virtual time (see the module's docstring)."""
    with asyncio.Runner(loop_factory=VirtualTimeLoop) as runner:
        return runner.run(coro)


def main() -> int:
    """Crawl the site through the CLI; the stats go to OUT_DIR/stats.json."""
    site, out, first, last = sys.argv[1:5]
    from skitter.cli import _main

    _main.run_on_loop = _on_virtual_time  # type: ignore[assignment]
    manifest = json.loads((Path(site) / "manifest.json").read_text())
    start = f"http://{manifest['names'][0]}:{manifest['ports'][0]}{manifest['start_path']}"
    os.environ[_MARKS_ENV] = f"{first},{last}"
    argv = [
        "crawl",
        __file__,
        "-a",
        f"url={start}",
        "-o",
        str(Path(out) / "items.jsonl"),
        "--stats-json",
        str(Path(out) / "stats.json"),
        "--no-progress",
        "-s",
        "DOWNLOAD_TRANSPORT=_guard_crawl.TRANSPORT",
        "-s",
        "CONCURRENT_REQUESTS=64",
        "-s",
        "CONCURRENT_REQUESTS_PER_DOMAIN=64",
        "-s",
        "ROBOTSTXT_OBEY=False",
        "-s",
        "LOG_LEVEL=ERROR",
    ]
    return _main.main(argv)


if __name__ == "__main__":
    sys.exit(main())
