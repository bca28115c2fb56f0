"""``skitter parse URL`` and ``skitter shell URL`` inside a project, without --spider:
the URL chooses the project's spider whose ``allowed_domains`` hold its host (Scrapy's
``spidercls_for_request``); when none or several do, parse refuses in one line that
names the spiders and ``--spider NAME``, and shell says so and goes on as a spider of
its own. Subprocesses in a project laid out by the test, against local servers."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from aiohttp import web

from skitter.cli._oneshot import handles
from skitter.spider import Spider
from skitter.testing import refused_port

from .conftest import Cli

SPIDERS = """
from skitter.testing import refused_port
from skitter import Spider


class Books(Spider):
    name = "books"
    allowed_domains = ["127.0.0.1:{books}"]

    def parse(self, response):
        yield {{"by": self.name, "title": response.css("h1::text").get()}}


class News(Spider):
    name = "news"
    allowed_domains = ["127.0.0.1:{news}"]

    def parse(self, response):
        yield {{"by": self.name}}


class Mirror(Spider):
    name = "mirror"
    allowed_domains = ["127.0.0.1:{news}"]

    def parse(self, response):
        yield {{"by": self.name}}
"""


async def site(serve: Any, title: str) -> int:
    async def page(request: web.Request) -> web.Response:
        return web.Response(text=f"<h1>{title}</h1>", content_type="text/html")

    app = web.Application()
    app.router.add_get("/", page)
    return int((await serve(app)).rsplit(":", 1)[1])


@pytest.fixture
async def project(tmp_path: Path, serve: Any) -> tuple[Path, int, int]:
    """A project of three spiders: books for one site's port, news and mirror both for
    the other's; the project's root and the two ports."""
    books, news = await site(serve, "Books"), await site(serve, "News")
    package = tmp_path / "shelf"
    (package / "spiders").mkdir(parents=True)
    (package / "__init__.py").write_text("")
    (package / "settings.py").write_text("SPIDER_MODULES = ['shelf.spiders']\n")
    (package / "spiders" / "__init__.py").write_text("")
    (package / "spiders" / "all.py").write_text(SPIDERS.format(books=books, news=news))
    (tmp_path / "skitter.toml").write_text('[settings]\ndefault = "shelf.settings"\n')
    return tmp_path, books, news


async def test_parse_uses_the_spider_whose_allowed_domains_hold_the_url(
    cli: Cli, project: tuple[Path, int, int]
) -> None:
    root, books, _ = project
    run = await cli("parse", f"http://127.0.0.1:{books}/", cwd=root)
    assert run.code == 0, run.err
    assert "'by': 'books'" in run.out and "'title': 'Books'" in run.out
    assert "Traceback" not in run.err


async def test_parse_without_a_spider_for_the_url_says_how_to_name_one(
    cli: Cli, project: tuple[Path, int, int]
) -> None:
    root, _, news = project
    nobody = f"http://127.0.0.1:{refused_port()}/"
    run = await cli("parse", nobody, cwd=root)
    assert run.code == 2, (run.out, run.err)
    assert "Traceback" not in run.err and "NotImplementedError" not in run.err
    assert f"no spider of the project handles {nobody}" in run.err
    assert "books, mirror, news" in run.err
    assert "--spider NAME" in run.err
    both = await cli("parse", f"http://127.0.0.1:{news}/", cwd=root)
    assert both.code == 2, (both.out, both.err)
    assert "several spiders of the project handle" in both.err
    assert "(mirror, news)" in both.err and "--spider NAME" in both.err
    named = await cli("parse", f"http://127.0.0.1:{news}/", "--spider", "news", cwd=root)
    assert named.code == 0, named.err
    assert "'by': 'news'" in named.out


async def test_shell_uses_the_spider_for_the_url_or_says_why_not(
    cli: Cli, project: tuple[Path, int, int]
) -> None:
    root, books, news = project
    run = await cli("shell", f"http://127.0.0.1:{books}/", "-c", "spider.name", cwd=root)
    assert (run.code, run.out.strip()) == (0, "books"), run.err
    both = await cli("shell", f"http://127.0.0.1:{news}/", "-c", "spider.name", cwd=root)
    assert (both.code, both.out.strip()) == (0, "default"), both.err
    assert "several spiders of the project handle" in both.err
    assert "--spider NAME" in both.err
    assert "Traceback" not in both.err


def test_a_spider_handles_its_allowed_domains_and_its_name_only() -> None:
    class Shop(Spider):
        name = "shop.example"
        allowed_domains = ["books.example:8080", "127.0.0.1"]

    class Anywhere(Spider):
        name = "anywhere"

    assert handles(Shop, "http://books.example:8080/a")
    assert handles(Shop, "https://www.books.example:8080/")
    assert not handles(Shop, "http://books.example:9090/")
    assert handles(Shop, "http://127.0.0.1:5000/")
    assert handles(Shop, "http://shop.example/")  # its name, as in Scrapy
    assert not handles(Anywhere, "http://127.0.0.1/")  # no allowed_domains: none
