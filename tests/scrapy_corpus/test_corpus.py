"""Idiomatic Scrapy spiders, crawled by skitter with only their import lines changed.

Each file in ``spiders/`` is plain Scrapy source, as Scrapy's documentation and tutorial
teach it. The test ports it (``import scrapy`` -> ``import skitter as scrapy``,
``from scrapy.x import`` -> ``from skitter.x import``), loads it as ``skitter crawl FILE``
does, crawls a fresh practice site with it and compares the feed's items with the ones
computed from the site's data set.
"""

from __future__ import annotations

import ast
import asyncio
import os
import re
import shutil
import sys
from pathlib import Path

import pytest

from skitter.testing._practice import practice_data, serve_practice_site

from ._port import assert_same_items, crawl_ported, port, port_into, ported_lines, read_feed
from .expected import CASES

SPIDERS = Path(__file__).parent / "spiders"
FILES = sorted(p.stem for p in SPIDERS.glob("*.py"))


def _param(name: str) -> object:
    case = CASES.get(name)
    if case is None or case.needs is None:
        return name
    return pytest.param(name, marks=pytest.mark.xfail(strict=True, reason=f"needs {case.needs}"))


def test_every_spider_has_its_expected_items_and_there_are_twenty() -> None:
    assert sorted(CASES) == FILES
    assert len(FILES) >= 20
    # Plain Scrapy source: pytest must never collect (import) one of them.
    assert not [name for name in FILES if name.startswith("test_") or name.endswith("_test")]


@pytest.mark.parametrize("name", FILES)
def test_the_port_changes_only_import_lines(name: str) -> None:
    source = (SPIDERS / f"{name}.py").read_text(encoding="utf-8")
    changed = ported_lines(source)
    assert changed, "a corpus spider imports scrapy"
    for before, after in changed:
        assert before.lstrip().startswith(("import scrapy", "from scrapy")), before
        assert "skitter" in after
    still_scrapy = re.compile(r"\s*(from|import) scrapy\b")
    assert not [line for line in port(source).splitlines() if still_scrapy.match(line)]


@pytest.mark.parametrize("name", [_param(name) for name in FILES])
async def test_the_spider_scrapes_exactly_the_expected_items(name: str, tmp_path: Path) -> None:
    case = CASES[name]
    async with serve_practice_site() as base:
        items, stats = await crawl_ported(SPIDERS / f"{name}.py", tmp_path, base, **case.args)
    assert stats["finish_reason"] == "finished"
    assert_same_items(items, case.items(practice_data(), base))
    assert {key: stats.get(key) for key in case.stats} == case.stats


async def test_a_ported_spider_runs_from_the_command_line(tmp_path: Path) -> None:
    """As a user runs it: ``skitter crawl FILE -o out.jsonl -a base_url=...``."""
    ported = port_into(SPIDERS / "quotes_tutorial.py", tmp_path)
    out = tmp_path / "out.jsonl"
    async with serve_practice_site() as base:
        command = [sys.executable, "-m", "skitter", "crawl", str(ported), "-o", str(out)]
        process = await asyncio.create_subprocess_exec(
            *command,
            "-a",
            f"base_url={base}",
            "--no-progress",
            "-L",
            "WARNING",
            stdout=asyncio.subprocess.PIPE,
            stderr=asyncio.subprocess.PIPE,
        )
        _, stderr = await process.communicate()
    assert process.returncode == 0, stderr.decode()
    assert_same_items(read_feed(out), CASES["quotes_tutorial"].items(practice_data(), base))


@pytest.mark.parametrize("python", [sys.executable, None])
async def test_a_ported_script_runs_with_crawler_process(
    python: str | None, tmp_path: Path
) -> None:
    """``python script.py BASE_URL``: CrawlerProcess(settings).crawl(...).start(); with
    ``python=None``, the unported script under Scrapy's Python, when Scrapy is installed."""
    script = SPIDERS / "script_crawler_process.py"
    if python is None:
        scrapy = _scrapy()
        if scrapy is None:
            pytest.skip("Scrapy is not installed (SKITTER_SCRAPY=...)")
        python = str(Path(scrapy).parent / "python")
    else:
        script = port_into(script, tmp_path)
    async with serve_practice_site() as base:
        process = await asyncio.create_subprocess_exec(
            python, str(script), base, cwd=tmp_path, stderr=asyncio.subprocess.PIPE
        )
        _, stderr = await process.communicate()
    assert process.returncode == 0, stderr.decode()
    expected = CASES["script_crawler_process"].items(practice_data(), base)
    assert_same_items(read_feed(tmp_path / "quotes.jsonl"), expected)


def _scrapy() -> str | None:
    """Scrapy's command, if installed (the ``bench`` extra) or named by SKITTER_SCRAPY."""
    beside = Path(sys.executable).parent / "scrapy"
    return (
        os.environ.get("SKITTER_SCRAPY")
        or shutil.which("scrapy")
        or (str(beside) if beside.exists() else None)
    )


@pytest.mark.slow
@pytest.mark.skipif(_scrapy() is None, reason="Scrapy is not installed (SKITTER_SCRAPY=...)")
@pytest.mark.parametrize("name", FILES)
async def test_scrapy_itself_scrapes_the_expected_items(name: str, tmp_path: Path) -> None:
    """The expected items (and statistics) are Scrapy's own: the unported file, run by
    ``scrapy runspider``; the statistics are read from its final "Dumping Scrapy stats"."""
    case = CASES[name]
    if case.scrapy_differs:
        pytest.skip(case.scrapy_differs)
    out = tmp_path / "out.jsonl"
    async with serve_practice_site() as base:
        args = {"base_url": base, **case.args}
        process = await asyncio.create_subprocess_exec(
            str(_scrapy()),
            "runspider",
            str(SPIDERS / f"{name}.py"),
            "-o",
            f"{out}:jsonlines",
            "-s",
            "LOG_LEVEL=INFO",
            *(part for key, value in args.items() for part in ("-a", f"{key}={value}")),
            stdout=asyncio.subprocess.PIPE,
            stderr=asyncio.subprocess.STDOUT,
        )
        log, _ = await process.communicate()
    text = log.decode()
    assert process.returncode == 0, text
    assert_same_items(read_feed(out), case.items(practice_data(), base))
    assert {key: _scrapy_stat(text, key) for key in case.stats} == case.stats


def _scrapy_stat(log: str, key: str) -> object:
    """One value of Scrapy's stats dump (a pprint of a dict) in its log."""
    found = re.search(
        rf"'{re.escape(key)}': ([^,\n}}]+)", log.rpartition("Dumping Scrapy stats")[2]
    )
    return ast.literal_eval(found.group(1)) if found else None
