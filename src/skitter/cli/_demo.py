"""``skitter demo``: serve the bundled shop on 127.0.0.1, crawl it, check the result.

The demo is also an end-to-end check a user can run: the site publishes the exact list
of items a correct crawl must extract, and the command compares what was written to the
feed with it, so "it worked" is a verified statement, not a hope.
"""

from __future__ import annotations

import argparse
import os
from pathlib import Path
from typing import Any

import orjson
from rich.console import Console

from skitter.cli._logging import LogOptions
from skitter.cli._run import finish, run_with_signals
from skitter.crawler import Crawler

__all__ = ["compare_items", "run_demo"]

#: Said before the crawl, so that the one ERROR the shop provokes on purpose is not
#: taken for a fault of skitter or of the machine.
_EXPECTED = (
    "Expected on the way: one ERROR, for /gift-cards: the shop answers that page with 500 "
    "every time, to show how a failing page is retried, then reported."
)


def _key(item: dict[str, Any]) -> bytes:
    return orjson.dumps(item, option=orjson.OPT_SORT_KEYS)


def compare_items(
    scraped: list[dict[str, Any]], expected: list[dict[str, Any]]
) -> tuple[list[dict[str, Any]], list[dict[str, Any]]]:
    """Items missing from ``scraped`` and items it has that were not expected (both as
    multisets, so a duplicate item counts as unexpected)."""
    remaining: dict[bytes, list[dict[str, Any]]] = {}
    for item in expected:
        remaining.setdefault(_key(item), []).append(item)
    unexpected = []
    for item in scraped:
        bucket = remaining.get(_key(item))
        if bucket:
            bucket.pop()
        else:
            unexpected.append(item)
    missing = [item for bucket in remaining.values() for item in bucket]
    return missing, unexpected


def _read_jsonl(path: Path) -> list[dict[str, Any]]:
    if not path.exists():
        return []
    return [orjson.loads(line) for line in path.read_bytes().splitlines() if line.strip()]


async def run_demo(args: argparse.Namespace, console: Console) -> int:
    from skitter.demo import DemoSpider, expected_items, serve_demo_site

    output = Path(args.output)
    output.parent.mkdir(parents=True, exist_ok=True)
    async with serve_demo_site() as base_url:
        console.print(f"[bold]skitter demo[/bold]: the demo shop is serving at {base_url}")
        console.print(_EXPECTED, highlight=False)
        crawler = Crawler(
            DemoSpider,
            cli_settings={"FEEDS": {str(output): {"format": "jsonl", "overwrite": True}}},
            env=os.environ,  # the CLI edge: SKITTER_<NAME> variables are settings
            start_url=base_url,
        )
        all_stats, forced = await run_with_signals(
            [crawler], console, progress=not args.no_progress
        )
    finish(
        [crawler], all_stats, args, console, LogOptions.from_settings({"LOG_LEVEL": args.loglevel})
    )
    if crawler.failure is not None:
        console.print(f"[red]error:[/red] the demo crawl failed: {crawler.failure}")
        return 1
    expected = expected_items(rendered=crawler.spider.render_js)
    missing, unexpected = compare_items(_read_jsonl(output), expected)
    total = len(expected)
    if not missing and not unexpected:
        console.print(
            f"[green]OK[/green]: {total} items written to {output}, exactly the demo shop's "
            "published list."
        )
        return 1 if forced else 0
    console.print(
        f"[red]MISMATCH[/red]: {len(missing)} of {total} expected items missing, "
        f"{len(unexpected)} unexpected (see {output})."
    )
    for label, items in (("missing", missing), ("unexpected", unexpected)):
        for item in items[:3]:
            console.print(f"  {label}: {item}")
    return 1
