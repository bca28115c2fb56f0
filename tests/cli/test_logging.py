"""Where the command's log and items go (issue 19): Scrapy's LOG_* settings, --logfile,
--nolog, -L, -o FILE:FORMAT and -o -, and no hard-wrapped lines off a terminal. Each
runs ``skitter crawl`` as a subprocess (stdout and stderr apart) against a local site."""

from __future__ import annotations

import asyncio
import csv
import json
import os
import sys
from pathlib import Path
from typing import Any

import pytest
from aiohttp import web

from ._cli import SRC, run_cli

SPIDER = """
import logging

from skitter import Request, Spider


class Pages(Spider):
    name = "pages"

    def start_requests(self):
        yield Request(self.settings["BASE"] + "/p/0")
        yield Request(self.settings["BASE"] + "/missing", errback=self.lost)

    def parse(self, response):
        if self.settings.getbool("PRINT"):
            print("printed by the spider")
        self.logger.warning("a warning from the spider")
        yield {"n": 0, "long": "x" * 150}

    def lost(self, failure):
        self.logger.info("errback saw %s", failure.value)
"""


@pytest.fixture
async def base(serve: Any) -> str:
    async def handle(request: web.Request) -> web.Response:
        if request.path == "/missing":
            return web.Response(status=404)
        return web.Response(text="<html></html>", content_type="text/html")

    app = web.Application()
    app.router.add_get("/{tail:.*}", handle)
    return await serve(app)


@pytest.fixture
def spider(tmp_path: Path) -> Path:
    path = tmp_path / "pages.py"
    path.write_text(SPIDER)
    return path


async def crawl(spider: Path, base: str, *args: str) -> tuple[int, str, str]:
    return await run_cli("crawl", str(spider), "-s", f"BASE={base}", *args, cwd=spider.parent)


@pytest.mark.timeout(120)
async def test_items_to_stdout_and_by_format(spider: Path, base: str) -> None:
    code, out, err = await crawl(spider, base, "-o", "-")
    assert code == 0, err
    assert [json.loads(line)["n"] for line in out.splitlines()] == [0]  # JSON lines
    assert "Crawl stats" in err or "Stats of spider" in err  # the log stays on stderr
    code, out, err = await crawl(spider, base, "-O", "items.dat:csv", "--output=-:json")
    assert code == 0, err
    assert json.loads(out) == [{"n": 0, "long": "x" * 150}]
    with (spider.parent / "items.dat").open() as file:
        assert list(csv.DictReader(file)) == [{"n": "0", "long": "x" * 150}]


@pytest.mark.timeout(120)
async def test_loglevel_warning_quiets_the_stats_and_nolog_everything(
    spider: Path, base: str
) -> None:
    code, _, err = await crawl(spider, base, "-L", "WARNING")
    assert code == 0, err
    assert "a warning from the spider" in err
    assert "Stats of spider" not in err and "item_scraped_count" not in err
    assert "errback saw" not in err
    assert "ERROR" not in err  # the 404 went to the errback: not an error of the crawl
    code, _, err = await crawl(spider, base, "--nolog")
    assert (code, err) == (0, ""), err


@pytest.mark.timeout(120)
async def test_log_file_format_and_stdout(spider: Path, base: str) -> None:
    log = spider.parent / "logs" / "crawl.log"
    log.parent.mkdir()
    log.write_text("an earlier run\n")
    code, out, err = await crawl(
        spider,
        base,
        "--logfile",
        str(log),
        "-s",
        "LOG_FORMAT=%(levelname)s|%(name)s|%(message)s",
        "-s",
        "LOG_STDOUT=True",
        "-s",
        "LOG_FILE_APPEND=False",
        "-s",
        "PRINT=1",
    )
    assert code == 0, err
    assert out == "" and err == ""  # everything went to the file
    text = log.read_text()
    assert "an earlier run" not in text  # LOG_FILE_APPEND=False
    assert "WARNING|pages|a warning from the spider" in text
    assert "INFO|stdout|printed by the spider" in text  # LOG_STDOUT
    assert "item_scraped_count" in text  # the stats table is in the log
    code, out, err = await crawl(spider, base, "-s", f"LOG_FILE={log}", "-s", "LOG_ENABLED=False")
    assert code == 0 and err == ""
    assert log.read_text().startswith(text)  # appended (the default), even with LOG_ENABLED off
    code, out, err = await crawl(spider, base, "-s", "LOG_STDOUT=True", "-o", "-")
    assert code == 2 and "LOG_STDOUT" in err


@pytest.mark.timeout(120)
async def test_dateformat_and_no_hard_wrap_off_a_terminal(spider: Path, base: str) -> None:
    code, _, err = await crawl(
        spider,
        base,
        "-s",
        "LOG_DATEFORMAT=day %j",
        "-s",
        "LOG_SHORT_NAMES=True",
        "-s",
        "DECLARED_SETTINGS=" + "X" * 120 + "_OWN_SETTING",
        "-s",
        "X" * 120 + "_OWN_SETTING=1",
        "-a",
        "long=" + "y" * 200,
    )
    assert code == 0, err
    assert all(line.startswith("day ") for line in err.splitlines() if "[skitter" in line)
    assert "[skitter] INFO: skitter " in err and "[skitter.crawler]" not in err
    code, _, err = await crawl(spider, base, "-s", "STATSMAILER_RCPTS=" + "z" * 150)
    assert code == 2
    [message] = [line for line in err.splitlines() if "STATSMAILER_RCPTS" in line]
    assert "z" * 150 in message  # one line, not wrapped at 80 columns


SCRIPT = """
import sys

from skitter.crawler import CrawlerProcess

sys.path.insert(0, ".")
from pages import Pages

process = CrawlerProcess(
    {{
        "BASE": "{base}",
        "LOG_FILE": "script.log",
        "LOG_FORMAT": "%(levelname)s~%(message)s",
        "LOG_STDOUT": True,
        "PRINT": True,
    }}
)
process.crawl(Pages)
process.start()
"""


@pytest.mark.timeout(120)
async def test_a_script_s_crawler_process_follows_the_log_settings(spider: Path, base: str) -> None:
    script = spider.parent / "script.py"
    script.write_text(SCRIPT.format(base=base))
    env = {**os.environ, "PYTHONPATH": SRC}
    proc = await asyncio.create_subprocess_exec(
        sys.executable,
        str(script),
        cwd=spider.parent,
        env=env,
        stdout=asyncio.subprocess.PIPE,
        stderr=asyncio.subprocess.PIPE,
    )
    out, err = await asyncio.wait_for(proc.communicate(), timeout=90)
    assert proc.returncode == 0, err.decode()
    assert (out, err) == (b"", b"")
    text = (spider.parent / "script.log").read_text()
    assert "WARNING~a warning from the spider" in text
    assert "INFO~printed by the spider" in text
