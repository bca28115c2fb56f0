"""Porting a Scrapy spider the way the documentation promises: change the import lines, nothing
else, and crawl it with skitter."""

from __future__ import annotations

import re
from collections import Counter
from pathlib import Path
from typing import Any

import orjson

from skitter import Crawler
from skitter.cli._loader import load_spiders

__all__ = ["assert_same_items", "crawl_ported", "port", "port_into", "ported_lines", "read_feed"]

_IMPORT = re.compile(r"^(?P<indent>\s*)import scrapy\s*$")
_FROM = re.compile(r"^(?P<indent>\s*)from scrapy(?P<sub>(?:\.\w+)*) import ")


def port(source: str) -> str:
    """``import scrapy`` -> ``import skitter as scrapy``; ``from scrapy.x import`` ->
    ``from skitter.x import``. Every other line is left as it is."""
    out = []
    for line in source.splitlines(keepends=True):
        body = line.rstrip("\r\n")
        end = line[len(body) :]
        body = _IMPORT.sub(r"\g<indent>import skitter as scrapy", body)
        body = _FROM.sub(r"\g<indent>from skitter\g<sub> import ", body)
        out.append(body + end)
    return "".join(out)


def ported_lines(source: str) -> list[tuple[str, str]]:
    """The (Scrapy, skitter) pairs of lines the port changed."""
    return [
        (before, after)
        for before, after in zip(source.splitlines(), port(source).splitlines(), strict=True)
        if before != after
    ]


def port_into(path: Path, workdir: Path) -> Path:
    """The ported copy of the spider file ``path``, written in ``workdir``."""
    ported = workdir / path.name
    ported.write_text(port(path.read_text(encoding="utf-8")), encoding="utf-8")
    return ported


def read_feed(feed: Path) -> list[Any]:
    return [orjson.loads(line) for line in feed.read_bytes().splitlines() if line.strip()]


async def crawl_ported(
    path: Path, workdir: Path, base_url: str, **spider_args: str
) -> tuple[list[Any], dict[str, Any]]:
    """Port ``path`` into ``workdir``, load it as ``skitter crawl FILE`` does, crawl it with
    a JSON lines feed; the items as the feed wrote them, and the final stats."""
    [spidercls] = load_spiders(str(port_into(path, workdir)))
    feed = workdir / "items.jsonl"
    settings = {"FEEDS": {str(feed): {"format": "jsonlines"}}}
    stats = await Crawler(spidercls, settings, base_url=base_url, **spider_args).run()
    return read_feed(feed), stats


def _key(item: Any) -> bytes:
    return orjson.dumps(item, option=orjson.OPT_SORT_KEYS)


def assert_same_items(got: list[Any], expected: list[Any]) -> None:
    """The same items, each as many times; the message lists what is missing and what is
    extra (a few of each)."""
    have, want = Counter(map(_key, got)), Counter(map(_key, expected))
    if have == want:
        return
    missing = list((want - have).elements())
    extra = list((have - want).elements())
    lines = [f"{len(got)} items scraped, {len(expected)} expected"]
    lines += [f"missing: {m.decode()}" for m in missing[:5]]
    lines += [f"unexpected: {e.decode()}" for e in extra[:5]]
    raise AssertionError("\n".join(lines))
