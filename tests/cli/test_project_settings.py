"""A spider run inside a project gets the project's settings module (issue 15).

Each test lays out a project in a temporary directory (Scrapy's layout: ``scrapy.cfg``
beside a package with settings, items, pipelines and spiders; or skitter's project
files) and runs ``skitter crawl`` as a real subprocess against a local server that
records what it was sent.
"""

from __future__ import annotations

import json
import textwrap
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from aiohttp import web

from ._cli import run_cli as run_cli_apart

# The assignments Scrapy's project template (scrapy/templates/project/module/
# settings.py.tmpl) leaves uncommented, with those of older templates.
TEMPLATE = """
BOT_NAME = "quotes"
SPIDER_MODULES = ["quotes.spiders"]
NEWSPIDER_MODULE = "quotes.spiders"
ADDONS = {}
ROBOTSTXT_OBEY = True
CONCURRENT_REQUESTS_PER_DOMAIN = 1
DOWNLOAD_DELAY = 1
FEED_EXPORT_ENCODING = "utf-8"
REQUEST_FINGERPRINTER_IMPLEMENTATION = "2.7"
TWISTED_REACTOR = "twisted.internet.asyncioreactor.AsyncioSelectorReactor"
"""

# What a user gets by uncommenting the template's commented lines (its middlewares and
# pipelines are the project's own classes, so a generated project imports them).
UNCOMMENTED = """
USER_AGENT = "quotes (+http://www.yourdomain.com)"
CONCURRENT_REQUESTS = 16
COOKIES_ENABLED = False
TELNETCONSOLE_ENABLED = False
DEFAULT_REQUEST_HEADERS = {
    "Accept": "text/html,application/xhtml+xml,application/xml;q=0.9,*/*;q=0.8",
    "Accept-Language": "en",
}
AUTOTHROTTLE_ENABLED = True
AUTOTHROTTLE_START_DELAY = 5
AUTOTHROTTLE_MAX_DELAY = 60
AUTOTHROTTLE_TARGET_CONCURRENCY = 1.0
AUTOTHROTTLE_DEBUG = False
HTTPCACHE_ENABLED = True
HTTPCACHE_EXPIRATION_SECS = 0
HTTPCACHE_DIR = "httpcache"
HTTPCACHE_IGNORE_HTTP_CODES = []
HTTPCACHE_STORAGE = "scrapy.extensions.httpcache.FilesystemCacheStorage"
"""

PROJECT_SETTINGS = """
USER_AGENT = "project-agent"
DEFAULT_REQUEST_HEADERS = {"X-From": "project"}
ITEM_PIPELINES = {"quotes.pipelines.StampPipeline": 300}
ORDER_A = "project"
ORDER_B = "project"
ORDER_C = "project"
"""

ITEMS = """
from skitter import Field, Item


class QuoteItem(Item):
    n = Field()
    order = Field()
    stamped_by = Field()
"""

PIPELINES = """
from quotes.items import QuoteItem


class StampPipeline:
    def process_item(self, item, spider):
        assert isinstance(item, QuoteItem)
        item["stamped_by"] = "quotes.pipelines"
        return item
"""

SPIDER = """
from skitter import Request, Spider

from quotes.items import QuoteItem


class QuotesSpider(Spider):
    name = "quotes"
    custom_settings = {"ORDER_B": "spider", "ORDER_C": "spider", "USER_AGENT": "spider-agent"}

    def start_requests(self):
        yield Request(self.settings["BASE"] + "/page/0")

    def parse(self, response):
        n = int(response.url.rsplit("/", 1)[1])
        order = [self.settings[name] for name in ("ORDER_A", "ORDER_B", "ORDER_C")]
        yield QuoteItem(n=n, order=order)
        if n < 2:
            yield response.follow(f"/page/{n + 1}")
"""

PLAIN_SPIDER = """
from skitter import Request, Spider


class Plain(Spider):
    name = "plain"

    def start_requests(self):
        yield Request(self.settings["BASE"] + "/page/0")

    def parse(self, response):
        yield {"project": self.settings.get("ORDER_A"), "bot": self.settings["BOT_NAME"]}
"""


class Site:
    """Pages /page/N and robots.txt, remembering the headers of each request."""

    def __init__(self) -> None:
        self.seen: list[tuple[str, dict[str, str]]] = []

    async def handle(self, request: web.Request) -> web.Response:
        self.seen.append((request.path, dict(request.headers)))
        if request.path == "/robots.txt":
            return web.Response(text="User-agent: *\nAllow: /\n")
        return web.Response(text="<html><p>quote</p></html>", content_type="text/html")

    def app(self) -> web.Application:
        app = web.Application()
        app.router.add_get("/{tail:.*}", self.handle)
        return app

    def pages(self) -> list[dict[str, str]]:
        return [headers for path, headers in self.seen if path.startswith("/page/")]


@pytest.fixture
async def site(serve: Any) -> tuple[Site, str]:
    site = Site()
    return site, await serve(site.app())


def write(root: Path, files: dict[str, str]) -> None:
    for name, text in files.items():
        path = root / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(textwrap.dedent(text).lstrip())


def scrapy_project(root: Path, settings: str) -> None:
    write(
        root,
        {
            "scrapy.cfg": "[settings]\ndefault = quotes.settings\n\n[deploy]\nproject = quotes\n",
            "quotes/__init__.py": "",
            "quotes/settings.py": settings,
            "quotes/items.py": ITEMS,
            "quotes/pipelines.py": PIPELINES,
            "quotes/spiders/__init__.py": "",
            "quotes/spiders/quotes.py": SPIDER,
        },
    )


async def run_cli(*args: str, cwd: Path, env: dict[str, str] | None = None) -> tuple[int, str]:
    """Exit status and what was written (stdout and stderr), unwrapped."""
    code, out, err = await run_cli_apart(*args, cwd=cwd, env=env)
    return code, " ".join((out + err).split())


def items(path: Path) -> list[dict[str, Any]]:
    return sorted(
        (json.loads(line) for line in path.read_text().splitlines()), key=lambda i: i.get("n", 0)
    )


async def test_a_scrapy_project_settings_apply_in_scrapys_order(
    site: tuple[Site, str], tmp_path: Path
) -> None:
    server, base = site
    root = tmp_path / "quotes_project"
    scrapy_project(root, TEMPLATE + PROJECT_SETTINGS)
    crawl = ("crawl", "quotes/spiders/quotes.py", "-s", f"BASE={base}", "-s", "DOWNLOAD_DELAY=0")
    code, out = await run_cli(*crawl, "-O", "out.jsonl", cwd=root)
    assert code == 0, out
    assert "Project 'quotes' at" in out and "settings quotes.settings (from scrapy.cfg)" in out
    got = items(root / "out.jsonl")
    assert [i["n"] for i in got] == [0, 1, 2]
    # the project's pipeline ran; defaults < settings.py < custom_settings < -s
    assert {i["stamped_by"] for i in got} == {"quotes.pipelines"}
    assert got[0]["order"] == ["project", "spider", "spider"]
    pages = server.pages()
    assert {h["X-From"] for h in pages} == {"project"}  # DEFAULT_REQUEST_HEADERS
    assert {h["User-Agent"] for h in pages} == {"spider-agent"}
    assert server.seen[0][0] == "/robots.txt"  # the template's ROBOTSTXT_OBEY = True

    code, out = await run_cli(
        *crawl, "-s", "ORDER_C=cli", "-s", "USER_AGENT=cli-agent", "-O", "cli.jsonl", cwd=root
    )
    assert code == 0, out
    assert items(root / "cli.jsonl")[0]["order"] == ["project", "spider", "cli"]
    assert server.pages()[-1]["User-Agent"] == "cli-agent"


async def test_the_project_root_goes_on_sys_path_from_outside_the_project(
    site: tuple[Site, str], tmp_path: Path
) -> None:
    """Run from another directory: the spider's ``from quotes.items import ...`` and the
    pipeline's dotted path resolve because the project's root is on ``sys.path``."""
    _, base = site
    scrapy_project(tmp_path / "proj", TEMPLATE + PROJECT_SETTINGS)
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    spider = tmp_path / "proj/quotes/spiders/quotes.py"
    code, out = await run_cli(
        "crawl",
        str(spider),
        "-s",
        f"BASE={base}",
        "-s",
        "DOWNLOAD_DELAY=0",
        "-O",
        "o.jsonl",
        cwd=elsewhere,
    )
    assert code == 0, out
    assert {i["stamped_by"] for i in items(elsewhere / "o.jsonl")} == {"quotes.pipelines"}


async def test_the_template_with_its_commented_lines_uncommented_is_accepted(
    site: tuple[Site, str], tmp_path: Path
) -> None:
    server, base = site
    root = tmp_path / "p"
    scrapy_project(root, TEMPLATE + UNCOMMENTED)
    code, out = await run_cli(
        "crawl",
        "quotes/spiders/quotes.py",
        "-s",
        f"BASE={base}",
        "-s",
        "DOWNLOAD_DELAY=0",
        "-s",
        "AUTOTHROTTLE_START_DELAY=0",  # the template's 5 s only slows the test
        "-O",
        "out.jsonl",
        "-s",
        "ORDER_A=a",
        "-s",
        "ORDER_B=b",
        "-s",
        "ORDER_C=c",
        cwd=root,
    )
    assert code == 0, out
    assert len(items(root / "out.jsonl")) == 3
    assert {h["Accept-Language"] for h in server.pages()} == {"en"}
    assert (root / ".skitter" / "httpcache").is_dir()  # HTTPCACHE_ENABLED honoured


@pytest.mark.parametrize(
    ("line", "name"),
    [
        ("STATSMAILER_RCPTS = ['ops@example.com']", "STATSMAILER_RCPTS"),
        ("SPIDER_LOADER_CLASS = 'myproject.loader.Loader'", "SPIDER_LOADER_CLASS"),
        ("CONCURENT_REQUESTS = 4", "CONCURENT_REQUESTS"),
    ],
)
async def test_an_unsupported_setting_in_settings_py_fails_the_run(
    site: tuple[Site, str], tmp_path: Path, line: str, name: str
) -> None:
    server, base = site
    root = tmp_path / "p"
    scrapy_project(root, TEMPLATE + line + "\n")
    code, out = await run_cli("crawl", "quotes/spiders/quotes.py", "-s", f"BASE={base}", cwd=root)
    assert code == 2, out
    assert name in out
    assert "quotes/settings.py of project 'quotes'" in out
    assert server.seen == []


async def test_a_refused_custom_setting_says_it_came_from_the_spider(tmp_path: Path) -> None:
    write(
        tmp_path,
        {
            "s.py": """
            from skitter import Spider

            class S(Spider):
                name = "s"
                custom_settings = {"STATSMAILER_RCPTS": ["ops@example.com"]}
            """,
            "plain.py": PLAIN_SPIDER,
        },
    )
    code, out = await run_cli("crawl", "s.py", cwd=tmp_path)
    assert code == 2, out
    assert "the spider's custom_settings: setting STATSMAILER_RCPTS" in out
    code, out = await run_cli("crawl", "plain.py", "-s", "RETRY_PRIORITY_ADJUST=1", cwd=tmp_path)
    assert code == 2 and "the command line: setting RETRY_PRIORITY_ADJUST" in out, out


PROJECT_FILES: dict[str, Callable[[str], dict[str, str]]] = {
    "skitter.toml": lambda module: {"skitter.toml": f'[settings]\ndefault = "{module}"\n'},
    "pyproject.toml": lambda module: {
        "pyproject.toml": f'[project]\nname = "x"\n\n[tool.skitter]\nsettings = "{module}"\n'
    },
}


@pytest.mark.parametrize("kind", sorted(PROJECT_FILES))
async def test_skitters_own_project_files(
    site: tuple[Site, str], tmp_path: Path, kind: str
) -> None:
    _, base = site
    root = tmp_path / "proj"
    write(root, {"mine/__init__.py": "", "mine/conf.py": "ORDER_A = 'mine'\nBOT_NAME = 'mine'\n"})
    write(root, PROJECT_FILES[kind]("mine.conf"))
    write(root, {"spiders/plain.py": PLAIN_SPIDER})
    code, out = await run_cli(
        "crawl", "spiders/plain.py", "-s", f"BASE={base}", "-O", "o.jsonl", cwd=root
    )
    assert code == 0, out
    assert items(root / "o.jsonl") == [{"project": "mine", "bot": "mine"}]
    assert f"settings mine.conf (from {kind}" in out


async def test_a_nearer_pyproject_without_tool_skitter_is_not_a_project(
    site: tuple[Site, str], tmp_path: Path
) -> None:
    _, base = site
    write(tmp_path, {"skitter.toml": '[settings]\ndefault = "conf"\n', "conf.py": "ORDER_A = 1\n"})
    write(tmp_path, {"sub/pyproject.toml": '[project]\nname = "sub"\n'})
    write(tmp_path, {"sub/plain.py": PLAIN_SPIDER})
    code, out = await run_cli(
        "crawl", "sub/plain.py", "-s", f"BASE={base}", "-O", "o.jsonl", cwd=tmp_path
    )
    assert code == 0, out
    assert items(tmp_path / "o.jsonl")[0]["project"] == 1


async def test_the_settings_module_from_the_environment(
    site: tuple[Site, str], tmp_path: Path
) -> None:
    """SCRAPY_SETTINGS_MODULE names the module outright (as in Scrapy), over scrapy.cfg;
    SKITTER_SETTINGS_MODULE wins over both."""
    _, base = site
    scrapy_project(tmp_path, "ORDER_A = 'cfg'\n")
    write(tmp_path, {"quotes/other.py": "ORDER_A = 'scrapy-env'\n"})
    write(tmp_path, {"quotes/third.py": "ORDER_A = 'skitter-env'\n", "plain.py": PLAIN_SPIDER})
    crawl = ("crawl", "plain.py", "-s", f"BASE={base}")
    results = []
    for n, env in enumerate(
        [
            {},
            {"SCRAPY_SETTINGS_MODULE": "quotes.other"},
            {"SCRAPY_SETTINGS_MODULE": "quotes.other", "SKITTER_SETTINGS_MODULE": "quotes.third"},
        ]
    ):
        code, out = await run_cli(*crawl, "-O", f"{n}.jsonl", cwd=tmp_path, env=env)
        assert code == 0, out
        results.append(items(tmp_path / f"{n}.jsonl")[0]["project"])
    assert results == ["cfg", "scrapy-env", "skitter-env"]
    code, out = await run_cli(*crawl, cwd=tmp_path, env={"SCRAPY_SETTINGS_MODULE": "nope.mod"})
    assert code == 2 and "cannot import the settings module nope.mod" in out, out


async def test_scrapy_project_picks_another_settings_entry(
    site: tuple[Site, str], tmp_path: Path
) -> None:
    _, base = site
    write(
        tmp_path, {"scrapy.cfg": "[settings]\ndefault = a\nother = b\n", "plain.py": PLAIN_SPIDER}
    )
    write(tmp_path, {"a.py": "ORDER_A = 'a'\n", "b.py": "ORDER_A = 'b'\n"})
    crawl = ("crawl", "plain.py", "-s", f"BASE={base}", "-O", "o.jsonl")
    code, out = await run_cli(*crawl, cwd=tmp_path, env={"SCRAPY_PROJECT": "other"})
    assert code == 0, out
    assert items(tmp_path / "o.jsonl")[0]["project"] == "b"
    code, out = await run_cli(*crawl, cwd=tmp_path, env={"SCRAPY_PROJECT": "missing"})
    assert code == 2 and "no 'missing'" in out, out


@pytest.mark.parametrize(
    ("files", "message"),
    [
        ({"skitter.toml": "[setings]\ndefault = 'x'\n"}, "unknown table 'setings'"),
        ({"skitter.toml": "[settings\n"}, "cannot read"),
        ({"pyproject.toml": "[tool.skitter]\nsetting = 'x'\n"}, "unknown key in [tool.skitter]"),
    ],
)
async def test_a_malformed_project_file_is_refused(
    tmp_path: Path, files: dict[str, str], message: str
) -> None:
    write(tmp_path, {**files, "plain.py": PLAIN_SPIDER})
    code, out = await run_cli("crawl", "plain.py", cwd=tmp_path)
    assert code == 2 and message in out, out


async def test_a_file_outside_any_project_runs_as_before(
    site: tuple[Site, str], tmp_path: Path
) -> None:
    _, base = site
    write(tmp_path, {"plain.py": PLAIN_SPIDER})
    code, out = await run_cli(
        "crawl", "plain.py", "-s", f"BASE={base}", "-O", "o.jsonl", cwd=tmp_path
    )
    assert code == 0, out
    assert "Project" not in out
    assert items(tmp_path / "o.jsonl") == [{"project": None, "bot": "skitter"}]


def test_each_layer_names_itself_in_a_refusal() -> None:
    """The library's layers too: a refusal says which one set the value."""
    from skitter import ConfigError
    from skitter.settings import Settings

    for layer, where in [
        ("project", "the project's settings"),
        ("spider", "the spider's custom_settings"),
        ("cli", "the command line"),
    ]:
        with pytest.raises(ConfigError, match=f"^{where}: setting STATSMAILER_RCPTS"):
            Settings.resolve(**{layer: {"STATSMAILER_RCPTS": ["ops@example.com"]}})
    with pytest.raises(
        ConfigError, match=r"^environment variable SKITTER_STATSMAILER_RCPTS: setting"
    ):
        Settings.resolve(env={"SKITTER_STATSMAILER_RCPTS": "ops@example.com"})
    with pytest.raises(ConfigError, match=r"^x\.py of project 'p': setting CONCURRENT_REQUESTS"):
        Settings({"CONCURRENT_REQUESTS": "many"}, origin="x.py of project 'p'")


async def test_spiders_of_two_projects_in_one_run_are_refused(tmp_path: Path) -> None:
    for name in ("a", "b"):
        write(tmp_path / name, {"skitter.toml": "", "plain.py": PLAIN_SPIDER})
    code, out = await run_cli("crawl", "a/plain.py", "b/plain.py", cwd=tmp_path)
    assert code == 2 and "spiders of two projects in one run" in out, out
