"""``skitter practice [--port N]``: serve the practice site on 127.0.0.1 to try spiders on.

The practice site is a quotes.toscrape.com look-alike (``skitter.testing._practice``):
the one the Scrapy corpus and the tutorial crawl, every page rendered from one data set,
so what a spider should get is known. It runs until Ctrl-C or SIGTERM. Only loopback is
bound: nothing outside the machine can reach it.
"""

from __future__ import annotations

import argparse
import asyncio

from rich.console import Console

from skitter.cli._dashcmd import until_signalled
from skitter.exceptions import ConfigError

__all__ = ["add_parser"]

_HOST = "127.0.0.1"

#: What the site holds, printed under its address so a first spider has somewhere to go.
_PAGES = (
    ("/", "10 quotes a page, with a Next link (/page/N/)"),
    ("/tag/TAG/", "the quotes of one tag"),
    ("/author/SLUG/", "an author's page"),
    ("/login", "a form with a CSRF token and a session cookie"),
    ("/search.aspx", "an ASP.NET-style form with __VIEWSTATE"),
    ("/api/quotes?page=N", "a JSON scroll API"),
    ("/robots.txt, /sitemap.xml", "robots.txt and gzipped sitemaps"),
    ("/feeds/quotes.xml, /feeds/quotes.csv", "RSS and CSV feeds"),
)


async def _serve(port: int) -> int:
    from skitter.testing.wiring import serve_practice_site

    try:
        async with serve_practice_site(_HOST, port) as base:
            print(f"Practice site: {base}/ (Ctrl-C to stop)", flush=True)
            for path, what in _PAGES:
                print(f"  {path:<38} {what}", flush=True)
            await until_signalled()
    except OSError as exc:
        raise ConfigError(
            f"cannot serve the practice site on {_HOST}:{port}: {exc.strerror or exc}; "
            "choose another port with --port N (0: a free one)"
        ) from None
    return 0


def _cmd_practice(args: argparse.Namespace, console: Console) -> int:
    return asyncio.run(_serve(args.port))


def add_parser(commands: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    practice = commands.add_parser(
        "practice",
        help="serve the practice site (a quotes.toscrape.com look-alike) on 127.0.0.1",
        description="Serves the practice site on 127.0.0.1 until Ctrl-C: quotes in pages, "
        "tags and authors, a login form with a CSRF token, an ASP.NET-style search form, "
        "a JSON API, robots.txt, sitemaps, RSS and CSV feeds. Every page is rendered from "
        "one fixed data set, so a spider's output can be checked. Only loopback is bound.",
    )
    practice.add_argument(
        "--port", type=int, default=8000, help="port (default: %(default)s; 0: a free one)"
    )
    practice.set_defaults(handler=_cmd_practice)
