"""``skitter parse URL``: what a spider's callback makes of a page, level by level.

The page is downloaded as the crawl would (``Crawler.probe()``), its callback runs
through the spider middlewares, and the items and requests it yields are printed, as
Scrapy's ``parse`` prints them. With ``--depth N`` the requests are followed, each with
its own callback (or ``-c``'s), N levels deep. Items go through the pipelines only with
``--pipelines``, and to a feed only with ``-o``/``-O``.

Exit codes: 0 when every page was downloaded and parsed; 1 when a download failed, the
callback was not found or raised, or nothing was downloaded; 2 for a usage error.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import logging
import pprint
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from rich.console import Console
from rich.markup import escape

from skitter.cli._oneshot import ForUrl, add_common_options, build_crawler, describe_error
from skitter.crawler import Crawler
from skitter.engine import Probe
from skitter.exceptions import ConfigError, HttpError
from skitter.http import Request, Response
from skitter.items import adapter_class

__all__ = ["add_parse_command"]

log = logging.getLogger("skitter.cli")


def add_parse_command(commands: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    cmd = commands.add_parser(
        "parse",
        help="print the items and requests a spider's callback yields for a URL",
        description="Downloads URL as the spider would, runs its callback (-c, the rule "
        "matching the URL with --rules, else parse) and prints the items and requests "
        "it yields; --depth follows the requests.",
    )
    cmd.add_argument("url", metavar="URL")
    cmd.add_argument("-c", "--callback", help="the spider method to parse URL with")
    cmd.add_argument(
        "-r", "--rules", action="store_true", help="the callback of the CrawlSpider rule for URL"
    )
    cmd.add_argument("-m", "--meta", help="JSON object merged into the request's meta")
    cmd.add_argument("--cbkwargs", help="JSON object merged into the request's cb_kwargs")
    cmd.add_argument("-d", "--depth", type=int, default=1, help="levels to follow (default: 1)")
    cmd.add_argument("-v", "--verbose", action="store_true", help="print each level apart")
    cmd.add_argument("--pipelines", action="store_true", help="send the items through pipelines")
    cmd.add_argument("--nolinks", action="store_true", help="do not print the requests")
    cmd.add_argument("--noitems", action="store_true", help="do not print the items")
    cmd.add_argument("--nocolour", action="store_true", help="(output is never coloured)")
    cmd.add_argument("-o", "--output", action="append", default=[], metavar="FILE",
                     help="append the items to FILE (.jsonl, .json, .csv)")  # fmt: skip
    cmd.add_argument("-O", "--overwrite-output", action="append", default=[], metavar="FILE",
                     help="like -o, but overwrite FILE")  # fmt: skip
    add_common_options(cmd)
    cmd.set_defaults(handler=run_parse)


def _json_object(text: str | None, flag: str) -> dict[str, Any]:
    if text is None:
        return {}
    try:
        value = json.loads(text)
    except ValueError as exc:
        raise ConfigError(f'{flag} takes a JSON object, e.g. \'{{"foo": "bar"}}\': {exc}') from None
    if not isinstance(value, dict):
        raise ConfigError(f"{flag} takes a JSON object, got {text!r}")
    return value


@dataclass
class _Results:
    items: dict[int, list[Any]] = field(default_factory=dict)
    requests: dict[int, list[Request]] = field(default_factory=dict)
    responses: int = 0
    errors: int = 0

    @property
    def max_level(self) -> int:
        return max([*self.items, *self.requests, 0])


class _Parser:
    def __init__(self, args: argparse.Namespace, probe: Probe) -> None:
        self.args = args
        self.probe = probe
        self.spider = probe.spider
        self.results = _Results()
        self.feeds = bool(args.output or args.overwrite_output)
        #: The requests downloaded so far: a page two callbacks link to is parsed once,
        #: as the crawl's dupe filter would have it (unless the request is dont_filter).
        self.seen: set[str] = set()

    def _callback(self, request: Request, response: Response, first: bool) -> Callable[..., Any]:
        cb: Any = request.callback
        if cb is None:
            if self.args.callback:
                cb = self.args.callback
            elif self.args.rules and first:
                cb = self._from_rules(response)
            else:
                cb = "parse"
        if not callable(cb):
            method = getattr(self.spider, cb, None)
            if not callable(method):
                raise ConfigError(f"Cannot find callback {cb!r} in spider: {self.spider.name}")
            cb = method
        return cb  # type: ignore[no-any-return]

    def _from_rules(self, response: Response) -> Any:
        rules = getattr(self.spider, "rules", None)
        if not rules:
            raise ConfigError(
                f"No CrawlSpider rules found in spider {self.spider.name!r}, "
                "please specify a callback to use for parsing"
            )
        for rule in rules:
            if rule.link_extractor.matches(response.url):
                return rule.callback or "parse"
        raise ConfigError(
            f"Cannot find a rule that matches {response.url!r} in spider: {self.spider.name}"
        )

    async def run(self, request: Request) -> None:
        level: list[Request] = [request]
        for depth in range(1, self.args.depth + 1):
            following: list[Request] = []
            for req in level:
                following += await self._one(req, depth, first=depth == 1)
            if depth == self.args.depth:
                break
            level = following

    async def _one(self, request: Request, depth: int, first: bool) -> list[Request]:
        probe = self.probe
        if not request.dont_filter:
            if request.taskid in self.seen:
                return []
            self.seen.add(request.taskid)
        try:
            response = await probe.fetch(request)
        except Exception as exc:
            log.error("Error downloading %s: %s", request, describe_error(exc, self.spider))
            self.results.errors += 1
            return []
        self.results.responses += 1
        try:
            await probe.check_input(response)
        except HttpError:
            log.error("Ignoring response %s: HTTP status code is not handled or not allowed",
                      response)  # fmt: skip
            self.results.errors += 1
            return []
        callback = self._callback(request, response, first)
        try:
            output = await probe.scrape(response, callback, dict(request.cb_kwargs))
        except Exception:
            log.exception("Spider error processing %s (callback %s)", response,
                          getattr(callback, "__name__", callback))  # fmt: skip
            self.results.errors += 1
            return []
        requests = [obj for obj in output if isinstance(obj, Request)]
        items = [obj for obj in output if not isinstance(obj, Request)]
        if self.args.pipelines or self.feeds:
            for item in items:
                await probe.process_item(item, response)
        self.results.items.setdefault(depth, []).extend(items)
        self.results.requests.setdefault(depth, []).extend(requests)
        return requests


def _print_level(results: _Results, args: argparse.Namespace, level: int | None) -> None:
    if not args.noitems:
        if level is None:
            items = [item for found in results.items.values() for item in found]
        else:
            items = results.items.get(level, [])
        print("# Scraped Items ", "-" * 60)
        pprint.pprint([adapter_class()(item).asdict() for item in items])
    if not args.nolinks:
        if level is None:
            requests = results.requests[max(results.requests)] if results.requests else []
        else:
            requests = results.requests.get(level, [])
        print("# Requests ", "-" * 65)
        pprint.pprint(requests)


def _print(results: _Results, args: argparse.Namespace) -> None:
    if args.verbose:
        for level in range(1, results.max_level + 1):
            print(f"\n>>> DEPTH LEVEL: {level} <<<")
            _print_level(results, args, level)
    else:
        print(f"\n>>> STATUS DEPTH LEVEL {results.max_level} <<<")
        _print_level(results, args, None)


async def _parse(crawler: Crawler, args: argparse.Namespace, request: Request) -> _Results:
    async with crawler.probe() as probe:
        parser = _Parser(args, probe)
        await parser.run(request)
    if crawler.failure is not None:  # a feed or pipeline that could not finish
        parser.results.errors += 1
    return parser.results


def run_parse(args: argparse.Namespace, console: Console) -> int:
    if "://" not in args.url and not args.url.startswith("data:"):
        raise ConfigError(f"skitter parse takes a URL, got {args.url!r}")
    if args.depth < 1:
        raise ConfigError(f"--depth must be at least 1, got {args.depth}")
    meta = _json_object(args.meta, "--meta")
    cb_kwargs = _json_object(args.cbkwargs, "--cbkwargs")
    forced: dict[str, Any] = {"FEEDS": {}}  # the options decide, whatever -s says
    for paths, overwrite in ((args.output, False), (args.overwrite_output, True)):
        for path in paths:
            forced["FEEDS"][path] = {"overwrite": overwrite}
    if not args.pipelines:
        forced["ITEM_PIPELINES"] = {}
    crawler = build_crawler(
        args, console, args.spider, forced=forced, for_url=ForUrl(args.url, required=True)
    )
    request = Request(args.url, dont_filter=True, meta=meta, cb_kwargs=cb_kwargs)
    results = asyncio.run(_parse(crawler, args, request))
    _print(results, args)
    if results.responses == 0:
        console.print(f"[red]error:[/red] No response downloaded for: {escape(args.url)}")
        return 1
    return 1 if results.errors else 0
