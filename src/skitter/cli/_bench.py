"""``skitter bench``: a quick local throughput check, as ``scrapy bench``.

A generated site (``_benchsite``: every page links to ten more, an endless tree) is
served on 127.0.0.1 by a child process, so the server does not share the crawl's event
loop or its core; a spider follows every link for ``--seconds`` (or ``--pages``), and
the command prints the pages per minute. Nothing leaves the machine. The figure says
how fast this machine and skitter's default settings crawl a site that answers at
once: an upper bound, not a promise for real sites.
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import os
import sys
import time
from collections.abc import AsyncIterator
from typing import Any

from rich.console import Console

__all__ = ["add_parser"]


@contextlib.asynccontextmanager
async def _site_process() -> AsyncIterator[str]:
    proc = await asyncio.create_subprocess_exec(
        sys.executable,
        "-m",
        "skitter.cli._benchsite",
        stdout=asyncio.subprocess.PIPE,
    )
    try:
        assert proc.stdout is not None
        line = await asyncio.wait_for(proc.stdout.readline(), timeout=30)
        if not line:
            raise RuntimeError("the bench site did not start")
        yield line.decode().strip()
    finally:
        if proc.returncode is None:
            proc.terminate()
        await proc.wait()


def _spider() -> type[Any]:
    from skitter import Spider

    class BenchSpider(Spider):
        name = "bench"
        allowed_domains = ["127.0.0.1"]

        def parse(self, response: Any) -> Any:
            yield {"url": response.url}
            yield from response.follow_all(css="a")

    return BenchSpider


async def _bench(args: argparse.Namespace, console: Console) -> int:
    from skitter.cli._options import pairs
    from skitter.cli._run import run_with_signals
    from skitter.crawler import Crawler

    settings: dict[str, Any] = {
        "LOGSTATS_INTERVAL": 1.0,
        "CLOSESPIDER_TIMEOUT": args.seconds,
        "CLOSESPIDER_PAGECOUNT": args.pages,
        **pairs(args.set, "-s"),
    }
    async with _site_process() as url:
        crawler = Crawler(
            _spider(), cli_settings=settings, env=os.environ, start_urls=[url + "/p/0"]
        )
        started = time.monotonic()
        all_stats, forced = await run_with_signals([crawler], console, progress=True)
        elapsed = time.monotonic() - started
    pages = int(all_stats[0].get("response_received_count", 0))
    rate = pages / elapsed * 60 if elapsed > 0 else 0.0
    print(
        f"Crawled {pages} pages in {elapsed:.1f} s: {rate:,.0f} pages/min "
        f"({crawler.settings['CONCURRENT_REQUESTS']} concurrent requests)"
    )
    if crawler.failure is not None:
        console.print(f"[red]error:[/red] the bench crawl failed: {crawler.failure}")
        return 1
    return 130 if forced else 0


def _cmd_bench(args: argparse.Namespace, console: Console) -> int:
    from skitter.cli._logging import LogOptions, logging_to

    if args.seconds <= 0 and args.pages <= 0:
        from skitter.exceptions import ConfigError

        raise ConfigError("bench needs a limit: --seconds or --pages above 0")
    with logging_to(LogOptions.from_settings({"LOG_LEVEL": args.loglevel}), console):
        return asyncio.run(_bench(args, console))


def add_parser(commands: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    bench = commands.add_parser(
        "bench",
        help="a quick throughput check: crawl a generated site on 127.0.0.1",
        description="Serves a generated site on 127.0.0.1 (in a child process) and "
        "crawls it, following every link, for --seconds or --pages; prints pages/min.",
    )
    bench.add_argument("--seconds", type=float, default=10.0, help="(default: %(default)s)")
    bench.add_argument("--pages", type=int, default=0, help="stop after N pages (0: no limit)")
    bench.add_argument("-s", "--set", action="append", default=[], metavar="NAME=VALUE")
    bench.add_argument("-L", "--loglevel", default=None, help="log level (default INFO)")
    bench.set_defaults(handler=_cmd_bench)
