"""``skitter fetch URL`` and ``skitter view URL``: one page, downloaded as the spider would.

Both go through ``Crawler.probe()``: the spider's (or the project's) settings, every
downloader middleware (robots.txt, cookies, redirects, retries) and its scope. ``fetch``
writes the body to stdout as it came (``--headers``: the request's and the response's
headers, credentials and cookies masked); ``view`` opens the page in a browser with a
``<base>`` tag so that it looks as the crawler saw it. A download that fails, or is
refused (offsite, robots.txt), exits 1; a response of any status is printed (a 4xx or
5xx is also said on stderr).
"""

from __future__ import annotations

import argparse
import asyncio
import logging
import sys

from rich.console import Console
from rich.markup import escape

from skitter._secrets import mask_header
from skitter.cli._oneshot import (
    ForUrl,
    add_common_options,
    build_crawler,
    describe_error,
    guess_url,
)
from skitter.crawler import Crawler
from skitter.http import Request, Response, TextResponse
from skitter.utils.response import open_in_browser

__all__ = ["add_fetch_commands", "download_one"]

log = logging.getLogger("skitter.cli")


def add_fetch_commands(commands: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    fetch = commands.add_parser(
        "fetch",
        help="download a URL as the spider would and print the body",
        description="Downloads URL through the spider's settings, downloader middlewares and "
        "allowed_domains (robots.txt when ROBOTSTXT_OBEY, cookies, redirects, retries) "
        "and writes the body to stdout. Use --nolog to keep stderr quiet.",
    )
    fetch.add_argument("url", metavar="URL")
    fetch.add_argument(
        "--headers", action="store_true", help="print the request's and response's headers"
    )
    _add_redirect_option(fetch)
    add_common_options(fetch)
    fetch.set_defaults(handler=run_fetch)

    view = commands.add_parser(
        "view",
        help="open a URL in the browser as the spider downloads it",
        description="Downloads URL as `skitter fetch` does and opens the body in a web "
        "browser (the BROWSER environment variable chooses it), with a <base> tag so its "
        "images and styles load from the site.",
    )
    view.add_argument("url", metavar="URL")
    _add_redirect_option(view)
    add_common_options(view)
    view.set_defaults(handler=run_view)


def _add_redirect_option(cmd: argparse.ArgumentParser) -> None:
    cmd.add_argument(
        "--no-redirect", action="store_true", help="show a 3xx response instead of following it"
    )


async def download_one(crawler: Crawler, url: str, local: bool, redirect: bool) -> Response:
    """``url`` through ``crawler``'s components, opened and closed around it."""
    request = Request(url, dont_filter=True)
    if not redirect:
        request.meta["handle_httpstatus_all"] = True
    if local:  # a file named on the command line: the user's own choice
        request.meta["allow_offsite"] = True
    async with crawler.probe() as probe:
        return await probe.fetch(request)


def _fetched(args: argparse.Namespace, console: Console) -> Response | None:
    url, local = guess_url(args.url)
    crawler = build_crawler(args, console, args.spider, for_url=ForUrl(args.url))
    try:
        response = asyncio.run(download_one(crawler, url, local, not args.no_redirect))
    except Exception as exc:
        console.print(f"[red]error:[/red] {escape(describe_error(exc, crawler.spider))}")
        return None
    if response.status >= 400:
        console.print(f"[yellow]warning:[/yellow] HTTP {response.status} from {escape(url)}")
    return response


def run_fetch(args: argparse.Namespace, console: Console) -> int:
    response = _fetched(args, console)
    if response is None:
        return 1
    out = sys.stdout.buffer
    if args.headers:
        sent = response.request.headers.text_items() if response.request is not None else []
        for prefix, headers in ((b">", sent), (b"<", response.header_items())):
            for name, value in headers:
                out.write(f"{prefix.decode()} {name}: {mask_header(name, value)}\n".encode())
            if prefix == b">":
                out.write(b">\n")
    else:
        out.write(response.body)
    out.flush()
    return 0


def run_view(args: argparse.Namespace, console: Console) -> int:
    response = _fetched(args, console)
    if response is None:
        return 1
    if not isinstance(response, TextResponse):
        console.print("[red]error:[/red] cannot view a response that is not text")
        return 1
    if not open_in_browser(response):
        console.print("[red]error:[/red] no web browser could be opened (set BROWSER)")
        return 1
    return 0
