"""COMMANDS_MODULE: a Scrapy project's own commands run as ``skitter NAME`` inside it,
written against ``scrapy.commands`` (under the alias) or ``skitter.commands``."""

from __future__ import annotations

import textwrap
from pathlib import Path

from .conftest import Cli

HELLO = """
from skitter.commands import ScrapyCommand

class HelloCommand(ScrapyCommand):
    requires_project = True
    default_settings = {"GREETING": "hello", "LOG_LEVEL": "ERROR"}

    def syntax(self):
        return "[options] NAME"

    def short_desc(self):
        return "Greet someone"

    def add_options(self, parser):
        super().add_options(parser)
        parser.add_argument("--shout", action="store_true")

    def run(self, args, opts):
        text = f"{self.settings['GREETING']} {' '.join(args)}"
        print(text.upper() if opts.shout else text)
        self.exitcode = 7
"""

CRAWLALL = """
from scrapy.commands import ScrapyCommand

class CrawlAll(ScrapyCommand):
    def short_desc(self):
        return "Crawl every spider"

    def run(self, args, opts):
        self.crawler_process.crawl("numbers")
        self.crawler_process.start()
"""

SPIDER = """
import scrapy

class Numbers(scrapy.Spider):
    name = "numbers"
    allowed_schemes = ["data"]
    start_urls = ["data:,1"]

    def parse(self, response):
        yield {"n": int(response.text)}
"""


def make_project(root: Path, commands: dict[str, str], settings: str = "") -> None:
    package = root / "proj"
    (package / "spiders").mkdir(parents=True)
    (package / "commands").mkdir()
    (root / "scrapy.cfg").write_text("[settings]\ndefault = proj.settings\n")
    (package / "__init__.py").write_text("")
    (package / "spiders" / "__init__.py").write_text("")
    (package / "spiders" / "numbers.py").write_text(SPIDER)
    (package / "commands" / "__init__.py").write_text("")
    for name, text in commands.items():
        (package / "commands" / f"{name}.py").write_text(textwrap.dedent(text))
    (package / "settings.py").write_text(
        'BOT_NAME = "proj"\nSPIDER_MODULES = ["proj.spiders"]\n'
        'COMMANDS_MODULE = "proj.commands"\n' + settings
    )


async def test_a_project_command_runs_with_its_options_and_settings(
    cli: Cli, tmp_path: Path
) -> None:
    make_project(tmp_path, {"hello": HELLO}, 'GREETING = "hi"\n')
    listed = await cli("-h")
    assert "hello" in listed.out and "Greet someone" in listed.out
    run = await cli("hello", "--shout", "world", "-s", "GREETING=hey")
    assert (run.code, run.out.strip()) == (7, "HEY WORLD"), run.err
    run = await cli("hello", "you")
    assert run.out.strip() == "hi you"  # the project's settings over the command's


async def test_a_command_written_for_scrapy_crawls_a_spider_by_name(
    cli_process: Cli, tmp_path: Path
) -> None:
    """A process of its own: the alias is ``scrapy`` in ``sys.modules`` for good."""
    make_project(tmp_path, {"crawlall": CRAWLALL}, 'FEEDS = {"out.jsonl": {}}\n')
    run = await cli_process("--scrapy-alias", "crawlall")
    assert run.code == 0, run.err
    assert (tmp_path / "out.jsonl").read_text() == '{"n":1}\n'


async def test_a_command_named_as_skitters_own_is_refused(cli: Cli, tmp_path: Path) -> None:
    make_project(tmp_path, {"crawl": HELLO})
    run = await cli("list")
    assert run.code == 2
    assert "the command 'crawl' (HelloCommand) has the name of one of skitter's own" in run.err


async def test_a_commands_module_that_does_not_import_is_refused(cli: Cli, tmp_path: Path) -> None:
    make_project(tmp_path, {"broken": "import no_such_module_here\n"})
    run = await cli("list")
    assert run.code == 2 and "COMMANDS_MODULE 'proj.commands': cannot import it" in run.err


async def test_outside_a_project_nothing_changes(cli: Cli, tmp_path: Path) -> None:
    run = await cli("version")
    assert run.code == 0
