"""``skitter check``'s run: unittest's runner over the spiders' contracts, imported only
when the command runs, so that no other command loads unittest and the contracts."""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import os
import sys
import time
from collections import defaultdict
from pathlib import Path
from typing import Any
from unittest import TextTestResult, TextTestRunner

from rich.console import Console

from skitter._components import merge_components
from skitter.cli._oneshot import build_crawlers
from skitter.cli._options import pairs
from skitter.cli._spiders import SpiderLoader
from skitter.cli._targets import project_here, project_settings
from skitter.contracts import ContractsManager
from skitter.contracts.wiring import crawl_case
from skitter.crawler import Crawler
from skitter.settings import ProjectSettings

__all__ = ["run_check"]


class _Result(TextTestResult):
    """unittest's result, summed up as Scrapy's check does."""

    def printSummary(self, start: float, stop: float) -> None:
        run = self.testsRun
        self.stream.writeln(self.separator2)
        self.stream.writeln(f"Ran {run} contract{'s' if run != 1 else ''} in {stop - start:.3f}s")
        self.stream.writeln()
        if self.wasSuccessful():
            self.stream.writeln("OK")
            return
        infos = [f"failures={len(self.failures)}"] if self.failures else []
        if self.errors:
            infos.append(f"errors={len(self.errors)}")
        self.stream.writeln(f"FAILED ({', '.join(infos)})")


def _manager(crawler: Crawler) -> ContractsManager:
    own = crawler.settings.view(ProjectSettings)
    return ContractsManager(merge_components(own.spider_contracts_base, own.spider_contracts))


async def _check(crawler: Crawler, result: _Result) -> None:
    manager = _manager(crawler)
    name = crawler.spidercls.name or crawler.spidercls.__name__
    try:
        probe = crawler.probe()
    except Exception:  # a spider or component that cannot be built: Scrapy's "crawl" error
        result.addError(crawl_case(name), sys.exc_info())
        return
    try:
        await probe.open()
    except Exception:
        result.addError(crawl_case(name), sys.exc_info())
        with contextlib.suppress(Exception):
            await probe.close()  # what did open is closed
        return
    try:
        await manager.check(probe.spider, probe, result)
    finally:
        await probe.close()


def run_check(args: argparse.Namespace, console: Console) -> int:
    overrides: dict[str, Any] = {"ITEM_PIPELINES": {}, "FEEDS": {}}
    if args.loglevel is None:
        args.loglevel = "WARNING"  # the report is the output; -L INFO shows the crawl's log
    if not args.targets:  # every spider of the project, as Scrapy's check
        project = project_here(Path.cwd(), os.environ, "skitter check")
        settings = project_settings(project, os.environ, pairs(args.set, "-s"))
        args.targets = SpiderLoader.from_settings(settings).list()
    named: list[tuple[str, Crawler]] = []
    for target in args.targets:
        for crawler in build_crawlers(args, console, target, overrides):
            named.append((crawler.spidercls.name or crawler.spidercls.__name__, crawler))
    if args.list:
        listed: dict[str, list[str]] = defaultdict(list)
        for name, crawler in named:
            listed[name] = sorted(
                _manager(crawler).tested_methods_from_spidercls(crawler.spidercls)
            )
        for name, methods in sorted(listed.items()):
            if methods or args.verbose:
                print(name)
                for method in methods:
                    print(f"  * {method}")
        return 0
    runner = TextTestRunner(stream=sys.stderr, verbosity=2 if args.verbose else 1)
    result = _Result(runner.stream, runner.descriptions, runner.verbosity)
    os.environ["SCRAPY_CHECK"] = "true"
    start = time.monotonic()
    try:
        for _name, crawler in named:
            if _manager(crawler).tested_methods_from_spidercls(crawler.spidercls):
                asyncio.run(_check(crawler, result))
    finally:
        os.environ.pop("SCRAPY_CHECK", None)
    stop = time.monotonic()
    result.printErrors()
    result.printSummary(start, stop)
    return 0 if result.wasSuccessful() else 1
