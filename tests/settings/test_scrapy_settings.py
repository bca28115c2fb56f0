"""Every one of Scrapy's setting names is honoured with Scrapy's meaning or refused at
start, never silently accepted (skitter/settings/scrapy_settings.txt lists them all)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import orjson
import pytest
from aiohttp import web

from skitter import ConfigError, Crawler, Response, Spider
from skitter.settings import SETTINGS, Settings
from skitter.settings._scrapy import UNSUPPORTED, scrapy_names

SCRAPY_NAMES = sorted(scrapy_names())

#: A value no setting accepts as "what skitter does anyway".
SURPRISE = "surprise-value-42"


def test_the_list_is_scrapys_whole_list() -> None:
    assert len(SCRAPY_NAMES) > 200
    assert {"HTTPCACHE_ENABLED", "JOBDIR", "EXTENSIONS", "LOG_FILE", "IMAGES_STORE"} <= set(
        SCRAPY_NAMES
    )


@pytest.mark.parametrize("name", SCRAPY_NAMES)
def test_every_scrapy_setting_is_implemented_or_refused(name: str) -> None:
    if name in SETTINGS:
        return  # implemented, with Scrapy's meaning (the settings reference documents it)
    assert name in UNSUPPORTED, f"{name} would be silently accepted"
    for layer in ("project", "spider", "cli"):
        with pytest.raises(ConfigError, match=f"setting {name} .* skitter does not implement"):
            Settings.resolve(**{layer: {name: SURPRISE}})
    with pytest.raises(ConfigError, match=f"setting {name} .* skitter does not implement"):
        Settings.resolve(env={f"SKITTER_{name}": SURPRISE})


def test_a_value_that_asks_for_skitters_own_behaviour_is_accepted() -> None:
    # what Scrapy's own project template and common settings.py files set
    settings = Settings.resolve(
        project={
            "BOT_NAME": "quotes",
            "ADDONS": {},
            "TWISTED_REACTOR": "twisted.internet.asyncioreactor.AsyncioSelectorReactor",
            "TELNETCONSOLE_ENABLED": False,
            "HTTPCACHE_ENABLED": False,
            "FEED_EXPORT_ENCODING": "utf-8",
        },
        cli={"METAREFRESH_ENABLED": "false", "MEMUSAGE_ENABLED": "0"},
    )
    assert settings["BOT_NAME"] == "quotes"
    assert settings["TELNETCONSOLE_ENABLED"] is False


@pytest.mark.parametrize(
    ("setting", "value", "hint"),
    [
        ("STATSMAILER_RCPTS", ["ops@example.com"], "ALERT_EMAIL_TO"),
        ("TWISTED_REACTOR", "twisted.internet.epollreactor.EPollReactor", "asyncio"),
        ("EXTENSIONS_BASE", {"myproject.ext.Ext": 500}, "EXTENSIONS"),
        ("DOWNLOADER_CLIENTCONTEXTFACTORY", "my.Factory", "DOWNLOAD_VERIFY_CERTIFICATES"),
        ("TELNETCONSOLE_ENABLED", True, "dashboard"),
    ],
)
def test_a_refusal_says_what_to_use_instead(setting: str, value: Any, hint: str) -> None:
    class Ported(Spider):
        name = "ported"
        custom_settings = {setting: value}

    with pytest.raises(ConfigError) as raised:
        Crawler(Ported)
    assert setting in str(raised.value) and hint in str(raised.value)


def test_a_typo_of_an_unsupported_name_is_still_caught() -> None:
    with pytest.raises(ConfigError, match="did you mean 'HTTPCACHE_ENABLED'"):
        Crawler(Spider, {"HTTPCACHE_ENABLE": True})


def test_names_of_the_projects_own_are_kept() -> None:
    settings = Settings({"MYPROJECT_API_KEY": "k"})
    assert settings["MYPROJECT_API_KEY"] == "k"


async def page_site(serve: Any) -> tuple[str, list[str]]:
    hits: list[str] = []

    async def handle(request: web.Request) -> web.Response:
        hits.append(request.path)
        return web.Response(text="<p>café</p>", content_type="text/html", charset="utf-8")

    app = web.Application()
    app.router.add_get("/{tail:.*}", handle)
    return await serve(app), hits


async def test_jobdir_is_the_job_directory(serve: Any, tmp_path: Path) -> None:
    base, hits = await page_site(serve)

    class Once(Spider):
        name = "once"
        start_urls = [f"{base}/a"]

        def parse(self, response: Response) -> Any:
            yield response.follow("/b")

    settings = {"JOBDIR": str(tmp_path / "job")}
    await Crawler(Once, settings).run()
    assert (tmp_path / "job" / "job.sqlite3").exists()
    await Crawler(Once, settings).run()  # resumed: everything is done already
    assert sorted(hits) == ["/a", "/b"]


async def test_feed_export_encoding_is_the_feeds_default(serve: Any, tmp_path: Path) -> None:
    base, _hits = await page_site(serve)

    class Text(Spider):
        name = "text"
        start_urls = [f"{base}/"]

        def parse(self, response: Response) -> Any:
            yield {"text": response.css("p::text").get()}

    out, other = tmp_path / "out.jsonl", tmp_path / "other.jsonl"
    feeds = {str(out): {}, str(other): {"encoding": "utf-8"}}
    await Crawler(Text, {"FEEDS": feeds, "FEED_EXPORT_ENCODING": "latin-1"}).run()
    assert orjson.loads(out.read_bytes().decode("latin-1")) == {"text": "café"}
    assert "café".encode() not in out.read_bytes()  # not UTF-8
    assert "café".encode() in other.read_bytes()
