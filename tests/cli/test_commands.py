"""The project commands, run as real subprocesses (issue 19): startproject, genspider,
list, crawl NAME (in a generated project and in a Scrapy project layout), settings,
version and bench; each crawl against a local server started by the test."""

from __future__ import annotations

import json
import textwrap
from pathlib import Path
from typing import Any

import pytest
from aiohttp import web

from ._cli import run_cli


class Site:
    """Pages /p/N linking to /p/N+1 (up to /p/4), robots.txt allowing all; remembers
    the paths asked for."""

    def __init__(self) -> None:
        self.paths: list[str] = []

    async def handle(self, request: web.Request) -> web.Response:
        self.paths.append(request.path)
        if request.path == "/robots.txt":
            return web.Response(text="User-agent: *\nAllow: /\n")
        n = int(request.path.rsplit("/", 1)[1])
        link = f'<a href="/p/{n + 1}">next</a>' if n < 4 else ""
        return web.Response(
            text=f"<html><head><title>page {n}</title></head><body>{link}</body></html>",
            content_type="text/html",
        )

    def app(self) -> web.Application:
        app = web.Application()
        app.router.add_get("/{tail:.*}", self.handle)
        return app


@pytest.fixture
async def site(serve: Any) -> tuple[Site, str]:
    site = Site()
    return site, await serve(site.app())


def lines(path: Path) -> list[dict[str, Any]]:
    return [json.loads(line) for line in path.read_text().splitlines()]


@pytest.mark.timeout(240)
async def test_a_generated_project_crawls_its_generated_spider_by_name(
    tmp_path: Path, site: tuple[Site, str]
) -> None:
    server, base = site
    code, out, err = await run_cli("startproject", "shop", cwd=tmp_path)
    assert code == 0, err
    root = tmp_path / "shop"
    assert (root / "skitter.toml").is_file()
    for name in ("settings", "items", "pipelines", "middlewares", "spiders/__init__"):
        assert (root / "shop" / f"{name}.py").is_file(), name
    settings = (root / "shop" / "settings.py").read_text()
    assert "ROBOTSTXT_OBEY = True" in settings
    # turn on the generated middlewares and pipeline: they must load and run
    for table in ("SPIDER_MIDDLEWARES", "DOWNLOADER_MIDDLEWARES", "ITEM_PIPELINES"):
        start = settings.index(f"# {table}")
        end = settings.index("# }", start) + 3
        block = "\n".join(line[2:] for line in settings[start:end].splitlines())
        settings = settings[:start] + block + settings[end:]
    settings = settings.replace("DOWNLOAD_DELAY = 1", "DOWNLOAD_DELAY = 0")
    (root / "shop" / "settings.py").write_text(settings)

    code, out, err = await run_cli("genspider", "pages", f"{base}/p/0", cwd=root)
    assert code == 0, err
    spider = root / "shop" / "spiders" / "pages.py"
    text = spider.read_text()
    assert 'allowed_domains = ["127.0.0.1"]' in text and f'"{base}/p/0"' in text
    spider.write_text(text + "\n        yield from response.follow_all(css='a')\n")
    code, out, err = await run_cli("genspider", "-t", "crawl", "links", "example.com", cwd=root)
    assert code == 0, err
    assert "class LinksSpider(CrawlSpider)" in (root / "shop" / "spiders" / "links.py").read_text()

    code, out, err = await run_cli("list", cwd=root / "shop" / "spiders")
    assert (code, out) == (0, "links\npages\n"), err

    code, out, err = await run_cli("crawl", "pages", "-O", "items.jsonl", cwd=root / "shop")
    assert code == 0, err
    items = lines(root / "shop" / "items.jsonl")
    assert sorted(item["title"] for item in items) == [f"page {n}" for n in range(5)]
    assert "/robots.txt" in server.paths  # the template's ROBOTSTXT_OBEY = True
    assert "Spider opened: pages" in err  # the generated middlewares ran
    assert "Project 'shop'" in err


@pytest.mark.timeout(240)  # several commands, each a fresh interpreter
async def test_genspider_and_startproject_refuse_to_overwrite(tmp_path: Path) -> None:
    code, _, err = await run_cli("startproject", "shop", cwd=tmp_path)
    assert code == 0, err
    code, _, err = await run_cli("startproject", "shop", cwd=tmp_path)
    assert code == 2 and "already" in err
    code, _, err = await run_cli("startproject", "9lives", cwd=tmp_path)
    assert code == 2 and "not a Python module name" in err
    root = tmp_path / "shop"
    code, _, err = await run_cli("genspider", "books", "books.example", cwd=root)
    assert code == 0, err
    before = (root / "shop" / "spiders" / "books.py").read_text()
    code, _, err = await run_cli("genspider", "-t", "sitemap", "books", "b.example", cwd=root)
    assert code == 2 and "a spider named 'books' exists in shop.spiders.books" in err
    assert (root / "shop" / "spiders" / "books.py").read_text() == before
    code, _, err = await run_cli("genspider", "--force", "-t", "xmlfeed", "books", "b.ex", cwd=root)
    assert code == 0, err
    assert "XMLFeedSpider" in (root / "shop" / "spiders" / "books.py").read_text()
    code, _, err = await run_cli("genspider", "shop", "shop.example", cwd=root)
    assert code == 2 and "named as its project" in err
    code, out, err = await run_cli("genspider", "-l", cwd=tmp_path)
    assert code == 0 and out.split() == [
        "Available",
        "templates:",
        "basic",
        "crawl",
        "csvfeed",
        "sitemap",
        "xmlfeed",
    ]
    # outside a project: the current directory
    code, _, err = await run_cli("genspider", "-t", "csvfeed", "feed", "f.example", cwd=tmp_path)
    assert code == 0 and "CSVFeedSpider" in (tmp_path / "feed.py").read_text()


SCRAPY_SPIDER = """
from skitter import Request, Spider


class {cls}(Spider):
    name = "{name}"

    def start_requests(self):
        yield Request(self.settings["BASE"] + "/p/3")

    def parse(self, response):
        yield {{"spider": self.name, "bot": self.settings["BOT_NAME"], "url": response.url}}
"""


def scrapy_layout(root: Path) -> None:
    files = {
        "scrapy.cfg": "[settings]\ndefault = quotes.settings\n",
        "quotes/__init__.py": "",
        "quotes/settings.py": 'BOT_NAME = "quotesbot"\nSPIDER_MODULES = ["quotes.spiders"]\n',
        "quotes/spiders/__init__.py": "",
        "quotes/spiders/toscrape.py": SCRAPY_SPIDER.format(cls="ToScrape", name="toscrape"),
        "quotes/spiders/deep/__init__.py": "",
        "quotes/spiders/deep/more.py": SCRAPY_SPIDER.format(cls="More", name="more"),
    }
    for name, text in files.items():
        path = root / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(textwrap.dedent(text))


@pytest.mark.timeout(240)  # several commands, each a fresh interpreter
async def test_a_scrapy_project_runs_its_spiders_by_name(
    tmp_path: Path, site: tuple[Site, str]
) -> None:
    _, base = site
    scrapy_layout(tmp_path)
    inside = tmp_path / "quotes" / "spiders"
    code, out, err = await run_cli("list", cwd=inside)
    assert (code, out) == (0, "more\ntoscrape\n"), err
    code, out, err = await run_cli(
        "crawl", "more", "toscrape", "-o", "{name}.jsonl", "-s", f"BASE={base}", cwd=inside
    )
    assert code == 0, err
    for name in ("more", "toscrape"):
        [item] = lines(inside / f"{name}.jsonl")
        assert (item["spider"], item["bot"]) == (name, "quotesbot")
    code, out, err = await run_cli("crawl", "more", "toscrape", "-o", "-", cwd=inside)
    assert code == 2 and "mix their items on stdout" in err
    code, out, err = await run_cli("crawl", "nosuch", cwd=inside)
    assert code == 2 and "no spider named 'nosuch'" in err and "more, toscrape" in err


async def test_a_name_that_is_also_a_directory_is_the_spider(
    tmp_path: Path, site: tuple[Site, str]
) -> None:
    _, base = site
    scrapy_layout(tmp_path)  # at the root, quotes/ is the project's package
    spider = SCRAPY_SPIDER.format(cls="Quotes", name="quotes")
    (tmp_path / "quotes" / "spiders" / "q.py").write_text(spider)
    code, out, err = await run_cli("crawl", "quotes", "-o", "-", "-s", f"BASE={base}", cwd=tmp_path)
    assert code == 0, err
    assert json.loads(out)["spider"] == "quotes"


@pytest.mark.timeout(240)  # several commands, each a fresh interpreter
async def test_two_spiders_of_one_name_are_an_error_naming_both(tmp_path: Path) -> None:
    scrapy_layout(tmp_path)
    twin = SCRAPY_SPIDER.format(cls="Twin", name="toscrape")
    (tmp_path / "quotes" / "spiders" / "twin.py").write_text(twin)
    code, _, err = await run_cli("crawl", "more", cwd=tmp_path)
    assert code == 2, err
    assert "two spiders are named 'toscrape'" in err
    assert "quotes.spiders.toscrape.ToScrape" in err and "quotes.spiders.twin.Twin" in err


@pytest.mark.timeout(240)  # several commands, each a fresh interpreter
async def test_crawl_name_outside_a_project_says_so(tmp_path: Path) -> None:
    code, _, err = await run_cli("crawl", "quotes", cwd=tmp_path)
    assert code == 2 and "no project found" in err, err
    code, _, err = await run_cli("crawl", "quotes.py", cwd=tmp_path)
    assert code == 2 and "no such spider file" in err, err
    code, _, err = await run_cli("list", cwd=tmp_path)
    assert code == 2 and "no project found" in err, err


@pytest.mark.timeout(240)  # several commands, each a fresh interpreter
async def test_settings_prints_the_resolved_value_with_secrets_masked(tmp_path: Path) -> None:
    scrapy_layout(tmp_path)
    settings = tmp_path / "quotes" / "settings.py"
    settings.write_text(
        settings.read_text()
        + 'HTTPPROXY_PASSWORD = "hunter2"\nDEFAULT_REQUEST_HEADERS = {"X-A": "1"}\n'
        + 'MY_URL = "http://user:s3cret@example.com/"\n'
    )
    asks = [
        (["--get", "BOT_NAME"], "quotesbot"),
        (["--get", "CONCURRENT_REQUESTS", "-s", "CONCURRENT_REQUESTS=7"], "7"),
        (["--getbool", "ROBOTSTXT_OBEY"], "False"),
        (["--getint", "CONCURRENT_REQUESTS"], "16"),
        (["--getfloat", "DOWNLOAD_DELAY"], "0.0"),
        (["--getlist", "SPIDER_MODULES"], "['quotes.spiders']"),
        (["--get", "DEFAULT_REQUEST_HEADERS"], '{"X-A": "1"}'),
        (["--get", "HTTPPROXY_PASSWORD"], "***"),
    ]
    for argv, expected in asks:
        code, out, err = await run_cli("settings", *argv, cwd=tmp_path)
        assert (code, out.strip()) == (0, expected), (argv, err)
    code, out, err = await run_cli("settings", "--get", "MY_URL", cwd=tmp_path)
    assert code == 0 and "s3cret" not in out and "example.com" in out
    code, out, err = await run_cli("settings", "--get", "CONCURENT_REQUESTS", cwd=tmp_path)
    assert out.strip() == "None" and "did you mean CONCURRENT_REQUESTS?" in err
    code, out, err = await run_cli("settings", "--get", "BOT_NAME", cwd=tmp_path / "quotes")
    assert out.strip() == "quotesbot"  # from anywhere inside the project


async def test_settings_masks_a_secret_with_a_slash_in_a_feed_uri_whole(tmp_path: Path) -> None:
    """Half of all AWS secret keys hold a '/': the authority does not end there."""
    feeds = '{"s3://AKIDEXAMPLE:wJalrX/UtnFEMI/K7MDENG@feeds/%(name)s.jsonl": {}}'
    code, out, err = await run_cli(
        "settings", "--get", "FEEDS", "-s", f"FEEDS={feeds}", "-s",
        "FILES_STORE=s3://AKIDEXAMPLE:wJalrX/UtnFEMI@media/files", cwd=tmp_path,
    )  # fmt: skip
    assert code == 0, err
    assert out.strip() == '{"s3://AKIDEXAMPLE:***@feeds/%(name)s.jsonl": {}}'
    code, out, err = await run_cli(
        "settings", "--get", "FILES_STORE", "-s",
        "FILES_STORE=s3://AKIDEXAMPLE:wJalrX/UtnFEMI@media/files", cwd=tmp_path,
    )  # fmt: skip
    assert (code, out.strip()) == (0, "s3://AKIDEXAMPLE:***@media/files"), err


async def test_version(tmp_path: Path) -> None:
    code, out, _ = await run_cli("version", cwd=tmp_path)
    assert code == 0 and out.startswith("skitter ")
    code, out, _ = await run_cli("version", "-v", cwd=tmp_path)
    labels = [line.split(":", 1)[0].strip() for line in out.splitlines()]
    assert code == 0
    assert {"skitter", "Python", "aiohttp", "parsel", "redis-py", "Playwright"} <= set(labels)


@pytest.mark.timeout(120)
async def test_bench_crawls_a_local_site_and_prints_the_rate(tmp_path: Path) -> None:
    code, out, err = await run_cli("bench", "--pages", "30", "-L", "WARNING", cwd=tmp_path)
    assert code == 0, err
    assert "pages/min" in out
    pages = int(out.split("Crawled ", 1)[1].split(" ", 1)[0])
    assert pages >= 30
