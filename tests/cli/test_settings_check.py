"""The settings check from every command that runs a spider (real subprocesses): a name
that nothing reads is refused before anything is downloaded, exit 2; a project's
setting that one of its spiders reads is not refused when another one runs."""

from __future__ import annotations

import textwrap
from pathlib import Path
from typing import Any

import pytest
from aiohttp import web

from ._cli import run_cli

SPIDER = """
from skitter import Request, Spider


class Pages(Spider):
    name = "pages"

    def start_requests(self):
        yield Request(self.settings["BASE"] + "/")

    def parse(self, response):
        yield {"url": response.url}
"""


@pytest.fixture
async def site(serve: Any) -> tuple[str, list[str]]:
    hits: list[str] = []

    async def handle(request: web.Request) -> web.Response:
        hits.append(request.path)
        return web.Response(text="<html>page</html>", content_type="text/html")

    app = web.Application()
    app.router.add_get("/{tail:.*}", handle)
    return await serve(app), hits


def write(root: Path, files: dict[str, str]) -> None:
    for name, text in files.items():
        path = root / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(textwrap.dedent(text).lstrip())


def flat(out: str, err: str) -> str:
    return " ".join((out + err).split())


@pytest.mark.parametrize(
    "command",
    [
        ("crawl", "pages.py"),
        ("runspider", "pages.py"),
        ("serve", "."),
        ("worker", "pages.py", "--redis", "redis://127.0.0.1:9/0", "--job", "j"),
        ("fetch", "{base}/", "--spider", "pages.py"),
        ("parse", "{base}/", "--spider", "pages.py"),
        ("shell", "{base}/", "--spider", "pages.py", "-c", "response.status"),
        ("check", "pages.py"),
    ],
)
async def test_every_command_refuses_a_name_nothing_reads(
    tmp_path: Path, site: tuple[str, list[str]], command: tuple[str, ...]
) -> None:
    base, hits = site
    write(tmp_path, {"pages.py": SPIDER})
    args = [part.format(base=base) for part in command]
    code, out, err = await run_cli(*args, "-s", f"BASE={base}", "-s", "DEPTH_MAX=1", cwd=tmp_path)
    assert code == 2, flat(out, err)
    assert "unknown setting 'DEPTH_MAX' (did you mean 'DEPTH_LIMIT'?)" in flat(out, err)
    assert hits == []  # refused before any request
    code, out, err = await run_cli(*args, "-s", "download_delay=1", cwd=tmp_path)
    assert code == 2 and "did you mean 'DOWNLOAD_DELAY'" in flat(out, err), flat(out, err)


PROJECT_SETTINGS = """
BOT_NAME = "shop"
SPIDER_MODULES = ["shop.spiders"]
SHOP_API_KEY = "k"
lower_case_helper = 3  # a Python variable of the module, not a setting
"""

SPIDERS = {
    "shop/spiders/pages.py": SPIDER,
    "shop/spiders/api.py": """
        from skitter import Spider


        class Api(Spider):
            name = "api"
            custom_settings = {"API_PAGES": 2}

            def parse(self, response):
                yield {"key": self.settings["SHOP_API_KEY"], "pages": self.settings["API_PAGES"]}
        """,
}


async def test_a_project_setting_read_by_another_spider_of_the_project_passes(
    tmp_path: Path, site: tuple[str, list[str]]
) -> None:
    """SHOP_API_KEY is read by the project's ``api`` spider: running ``pages`` with the
    project's settings is no error, but a name no spider reads still is."""
    base, hits = site
    write(tmp_path, {"scrapy.cfg": "[settings]\ndefault = shop.settings\n"})
    write(tmp_path, {"shop/__init__.py": "", "shop/spiders/__init__.py": ""})
    write(tmp_path, {"shop/settings.py": PROJECT_SETTINGS, **SPIDERS})
    code, out, err = await run_cli("crawl", "pages", "-s", f"BASE={base}", cwd=tmp_path)
    assert code == 0, flat(out, err)
    assert hits == ["/"]
    write(tmp_path, {"shop/settings.py": PROJECT_SETTINGS + "SHOP_API_KEYS = 'k'\n"})
    code, out, err = await run_cli("crawl", "pages", "-s", f"BASE={base}", cwd=tmp_path)
    assert code == 2, flat(out, err)
    assert (
        "shop/settings.py of project 'shop': unknown setting 'SHOP_API_KEYS' "
        "(did you mean 'SHOP_API_KEY'?)"
    ) in flat(out, err)


async def test_a_spiders_custom_settings_must_be_read_by_its_own_crawl(tmp_path: Path) -> None:
    """``custom_settings`` belong to the spider: a name there that only another spider
    reads does nothing for this one."""
    write(tmp_path, {"scrapy.cfg": "[settings]\ndefault = shop.settings\n"})
    write(tmp_path, {"shop/__init__.py": "", "shop/spiders/__init__.py": ""})
    write(tmp_path, {"shop/settings.py": PROJECT_SETTINGS, **SPIDERS})
    write(
        tmp_path,
        {
            "shop/spiders/pages.py": SPIDER.replace(
                'name = "pages"', 'name = "pages"\n    custom_settings = {"API_PAGES": 3}'
            )
        },
    )
    code, out, err = await run_cli("crawl", "pages", cwd=tmp_path)
    assert code == 2, flat(out, err)
    assert "the spider's custom_settings: unknown setting 'API_PAGES'" in flat(out, err)
