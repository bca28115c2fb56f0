"""Names that nothing reads are refused at start; components declare what they read.

A setting name is honoured by skitter (the registry), by a Scrapy name skitter accepts or
refuses, or by a component of the crawl that reads it: the spider and the classes its
settings name. Everything else would do nothing, so ``Crawler(...)`` refuses it, saying
which name was meant (skitter.settings._declared, _suggest, _scan).
"""

from __future__ import annotations

import dataclasses
import logging
import sys
import textwrap
from pathlib import Path
from typing import Any, ClassVar

import pytest

from skitter import ConfigError, Crawler, Spider
from skitter.crawler import CrawlerProcess
from skitter.exceptions import NotConfigured
from skitter.settings import Setting, View


class Plain(Spider):
    name = "plain"


#: The names the issue found accepted in silence, and the name each was meant to be.
MEANT = [
    ("CLOSESPIDER_ITEMS", 3, "CLOSESPIDER_ITEMCOUNT"),
    ("DEPTH_MAX", 2, "DEPTH_LIMIT"),
    ("FEED_EXPORT_BATCH_SIZE", 10, "FEED_EXPORT_BATCH_ITEM_COUNT"),
    ("SESSION_POOL", 4, "SESSION_POOL_SIZE"),
    ("AUTOTHROTTLE", True, "AUTOTHROTTLE_ENABLED"),
    ("RETRY_COUNT", 1, "RETRY_TIMES"),
    ("TIMEOUT", 5, "DOWNLOAD_TIMEOUT"),
    ("PROXY", "http://127.0.0.1:3128", "PROXY_LIST"),
    ("CONCURENT_REQUESTS", 2, "CONCURRENT_REQUESTS"),
    ("MAX_DEPTH", 2, "DEPTH_LIMIT"),
    ("USERAGENT", "me", "USER_AGENT"),
]


def layered(layer: str, values: dict[str, Any]) -> Crawler:
    """A crawler with ``values`` in one layer: the project's, the spider's or the CLI's."""
    if layer == "project":
        return Crawler(Plain, values)
    if layer == "cli":
        return Crawler(Plain, cli_settings=values)
    spider = type("Custom", (Spider,), {"name": "custom", "custom_settings": values})
    return Crawler(spider)


@pytest.mark.parametrize("layer", ["project", "spider", "cli"])
@pytest.mark.parametrize(("name", "value", "meant"), MEANT)
def test_a_name_nothing_reads_is_refused_with_the_name_meant(
    layer: str, name: str, value: Any, meant: str
) -> None:
    with pytest.raises(ConfigError) as refused:
        layered(layer, {name: value})
    message = str(refused.value)
    assert f"unknown setting {name!r} (did you mean {meant!r}" in message
    assert "DECLARED_SETTINGS" in message and "declared_settings" in message  # what to do


@pytest.mark.parametrize("layer", ["project", "spider", "cli"])
def test_lower_case_names_are_refused_in_every_layer(layer: str) -> None:
    """Scrapy reads upper-case names only: ``-s download_delay=2`` would do nothing."""
    with pytest.raises(ConfigError, match=r"upper case.*did you mean 'DOWNLOAD_DELAY'"):
        layered(layer, {"download_delay": 2})
    with pytest.raises(ConfigError, match=r"'my_own_thing'.*upper case"):
        layered(layer, {"my_own_thing": 1})


def test_lower_case_names_are_refused_from_the_environment_layer_too() -> None:
    with pytest.raises(ConfigError, match="upper case"):
        Crawler(Plain, cli_settings={"concurrent_requests": 1}, env={})


def test_every_typo_is_listed_at_once() -> None:
    with pytest.raises(ConfigError) as refused:
        Crawler(Plain, {"DEPTH_MAX": 1}, cli_settings={"RETRY_COUNT": 2, "NOTHING_HERE": 1})
    message = str(refused.value)
    assert "the project's settings: unknown setting 'DEPTH_MAX'" in message
    assert "the command line: unknown setting 'RETRY_COUNT'" in message
    assert "NOTHING_HERE" not in message  # close to nothing known: not a typo


def test_a_name_close_to_nothing_known_is_the_projects_own_and_is_kept(
    caplog: pytest.LogCaptureFixture,
) -> None:
    """Scrapy accepts any name (projects keep their own configuration in settings);
    skitter keeps one that looks like no known setting, and says so once."""
    with caplog.at_level(logging.WARNING, logger="skitter.settings"):
        crawler = Crawler(Plain, {"MYPROJECT_DB_URL": "sqlite://", "TEST1": 1, "TEST3": 3})
    assert crawler.settings.get("MYPROJECT_DB_URL") == "sqlite://"
    assert crawler.settings.get("TEST3") == 3  # TEST1's sibling, not its typo
    (warning,) = [r.getMessage() for r in caplog.records if r.name == "skitter.settings"]
    assert "MYPROJECT_DB_URL (the project's settings)" in warning and "TEST1" in warning


def test_the_spiders_own_names_are_read_by_its_code() -> None:
    """A spider that reads a name anywhere in its code (a method, a helper it calls, a
    module constant it uses, a list of names as a class attribute) declares it; Scrapy
    spiders were never written otherwise. Its custom_settings dict declares nothing."""

    class Reader(Spider):
        name = "reader"
        custom_settings: ClassVar[dict[str, Any]] = {
            "API_KEY": "k",
            "PAGES": 3,
            "REGION": "eu",
            "ACCOUNT_ID": 7,
        }
        required: ClassVar[list[str]] = ["ACCOUNT_ID"]  # read in a loop elsewhere

        def parse(self, response: Any) -> Any:
            yield {"key": self.settings["API_KEY"], "pages": _pages(self.settings)}

        @property
        def region(self) -> str:
            return str(self.settings[REGION_SETTING])

    crawler = Crawler(Reader)
    assert crawler.settings["API_KEY"] == "k"


REGION_SETTING = "REGION"


def _pages(settings: Any) -> int:
    return int(settings.getint("PAGES"))


class CountingPipeline:
    """Reads its settings in from_crawler, as Scrapy's documentation writes pipelines."""

    def __init__(self, limit: int) -> None:
        self.limit = limit

    @classmethod
    def from_crawler(cls, crawler: Any) -> CountingPipeline:
        return cls(crawler.settings.getint("COUNTING_LIMIT"))

    def process_item(self, item: Any, spider: Any) -> Any:
        return item


class SwitchedOffExtension:
    @classmethod
    def from_crawler(cls, crawler: Any) -> SwitchedOffExtension:
        if not crawler.settings.getbool("SWITCHED_EXT_ENABLED"):
            raise NotConfigured
        return cls()


def test_components_named_by_settings_declare_what_they_read() -> None:
    """Pipelines, extensions (also one that switches itself off) and middlewares, given
    as classes or paths, declare the names their code reads."""
    settings = {
        "ITEM_PIPELINES": {CountingPipeline: 100},
        "EXTENSIONS": {f"{__name__}.SwitchedOffExtension": 500},
        "COUNTING_LIMIT": 5,
        "SWITCHED_EXT_ENABLED": False,
    }
    assert Crawler(Plain, settings).settings["COUNTING_LIMIT"] == 5
    with pytest.raises(ConfigError, match="'COUNTING_LIMITS' \\(did you mean 'COUNTING_LIMIT'"):
        Crawler(Plain, {**settings, "COUNTING_LIMITS": 5})  # a typo of a plug-in's own name
    with pytest.raises(ConfigError, match="unknown setting 'COUNTING_LIMIT'"):
        Crawler(Plain, {"COUNTING_LIMIT": 5})  # the pipeline is not in this crawl


def test_a_plug_in_module_loaded_by_path_declares_its_names(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A Scrapy plug-in, as installed: its middleware reads its settings through a
    helper of its package; nothing in it knows about skitter."""
    package = tmp_path / "fakeua"
    package.mkdir()
    (package / "__init__.py").write_text("")
    (package / "_config.py").write_text(
        textwrap.dedent(
            """
            PROVIDERS = "FAKEUSERAGENT_PROVIDERS"

            def providers(settings):
                return settings.getlist(PROVIDERS) or settings.getlist("FAKEUSERAGENT_FALLBACK")
            """
        )
    )
    (package / "middleware.py").write_text(
        textwrap.dedent(
            """
            from fakeua._config import providers

            class RandomUserAgentMiddleware:
                def __init__(self, providers):
                    self.providers = providers

                @classmethod
                def from_crawler(cls, crawler):
                    return cls(providers(crawler.settings))
            """
        )
    )
    monkeypatch.syspath_prepend(str(tmp_path))
    monkeypatch.delitem(sys.modules, "fakeua", raising=False)
    mws = {"DOWNLOADER_MIDDLEWARES": {"fakeua.middleware.RandomUserAgentMiddleware": 400}}
    values = {"FAKEUSERAGENT_PROVIDERS": ["a"], "FAKEUSERAGENT_FALLBACK": "ua"}
    assert Crawler(Plain, {**mws, **values}).settings["FAKEUSERAGENT_PROVIDERS"] == ["a"]
    with pytest.raises(ConfigError, match="did you mean 'FAKEUSERAGENT_PROVIDERS'"):
        Crawler(Plain, {**mws, "FAKEUSERAGENT_PROVIDER": ["a"]})


@dataclasses.dataclass(frozen=True, slots=True)
class ThrottleView(View):
    """A plug-in's typed view: its fields are its settings, with defaults."""

    mythrottle_rate: float = 2.0
    mythrottle_burst: int = 4


class Declaring:
    """A component whose names are built at run time, so it declares them."""

    declared_settings: ClassVar[tuple[Any, ...]] = (
        "DYN_MODE",
        "DYN_SLOT_*",
        Setting("DYN_LIMIT", 10, int, "How many."),
        ThrottleView,
    )

    @classmethod
    def from_crawler(cls, crawler: Any) -> Declaring:
        prefix = "DYN"
        crawler.settings.get(prefix + "_MODE")
        return cls()


def test_declared_settings_names_prefixes_typed_rows_and_views() -> None:
    ext = {"EXTENSIONS": {Declaring: 100}}
    values = {"DYN_MODE": "x", "DYN_SLOT_A": 1, "DYN_SLOT_B": 2, "MYTHROTTLE_RATE": "0.5"}
    settings = Crawler(Plain, {**ext, **values}, cli_settings={"DYN_LIMIT": "25"}).settings
    assert settings["DYN_LIMIT"] == 25  # a string from -s, read as the row's type
    assert settings.view(ThrottleView) == ThrottleView(mythrottle_rate="0.5", mythrottle_burst=4)
    assert Crawler(Plain, ext).settings["DYN_LIMIT"] == 10  # unset: the row's default
    with pytest.raises(ConfigError, match="setting DYN_LIMIT: cannot read 'many' as int"):
        Crawler(Plain, ext, cli_settings={"DYN_LIMIT": "many"})
    with pytest.raises(ConfigError, match="unknown setting 'DYN_LIMITS'"):
        Crawler(Plain, {**ext, "DYN_LIMITS": 1})


@pytest.mark.parametrize(
    ("declaration", "message"),
    [
        (("my_name",), "'my_name' is not an upper-case setting name"),
        ("API_KEY", "must be a list"),
        ((Setting("RETRY_TIMES", 5, int, ""),), "RETRY_TIMES is skitter's own setting"),
        ((42,), "42 is not a setting name or prefix"),
    ],
)
def test_a_malformed_declaration_is_refused(declaration: Any, message: str) -> None:
    spider = type("Decl", (Spider,), {"name": "decl", "declared_settings": declaration})
    with pytest.raises(ConfigError, match=message):
        Crawler(spider)


def test_two_components_declaring_one_name_differently_are_refused() -> None:
    one = type("One", (), {"declared_settings": (Setting("SHARED_X", 1, int, ""),)})
    two = type("Two", (), {"declared_settings": (Setting("SHARED_X", "1", str, ""),)})
    with pytest.raises(ConfigError, match="declare SHARED_X with different types or defaults"):
        Crawler(Plain, {"ITEM_PIPELINES": {one: 1, two: 2}})


def test_the_project_declares_its_own_names_in_declared_settings() -> None:
    """Names the project's code reads outside the crawl's components (a helper module,
    a deploy script): by name or by prefix."""
    own = {"DECLARED_SETTINGS": ["DEPLOY_TARGET", "MYPROJECT_*"]}
    values = {"DEPLOY_TARGET": "prod", "MYPROJECT_DB": "sqlite://", "MYPROJECT_KEY": "k"}
    assert Crawler(Plain, {**own, **values}).settings["MYPROJECT_DB"] == "sqlite://"
    with pytest.raises(ConfigError, match="unknown setting 'DEPLOY_TARGETS'"):
        Crawler(Plain, {**own, "DEPLOY_TARGETS": "prod"})
    with pytest.raises(ConfigError, match="DECLARED_SETTINGS: 'api_key' is not an upper-case"):
        Crawler(Plain, {"DECLARED_SETTINGS": ["api_key"]})


def test_crawler_process_refuses_at_crawl() -> None:
    """A script's ``process.crawl(Spider)`` fails there, before anything runs."""
    process = CrawlerProcess({"DEPTH_MAX": 2}, install_root_handler=False)
    with pytest.raises(ConfigError, match="did you mean 'DEPTH_LIMIT'"):
        process.crawl(Plain)


class KeyReader(Spider):
    name = "key_reader"

    def parse(self, response: Any) -> Any:
        yield {"key": self.settings["SHARED_API_KEY"]}


def test_a_shared_name_read_by_another_spider_of_the_run_passes() -> None:
    """Settings shared by several crawls may hold a name one of them reads: ``readers``
    names the others. A spider's own custom_settings must be read by its own crawl."""
    shared = {"SHARED_API_KEY": "k"}
    with pytest.raises(ConfigError, match="unknown setting 'SHARED_API_KEYS'"):
        Crawler(Plain, {"SHARED_API_KEYS": "k"}, readers=[KeyReader])
    assert Crawler(Plain, shared, readers=[KeyReader]).settings["SHARED_API_KEY"] == "k"
    assert Crawler(Plain, cli_settings=shared, readers=[KeyReader]).spidercls is Plain
    own = type("Own", (Spider,), {"name": "own", "custom_settings": shared})
    with pytest.raises(ConfigError, match=r"custom_settings: unknown setting .*another spider"):
        Crawler(own, readers=[KeyReader])


def test_a_plug_in_reading_through_a_module_and_a_table_declares_its_names(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """scrapy-redis's way: the spider calls ``connection.from_settings(settings)``, a
    function of another module of its package, which reads the names of a global dict."""
    package = tmp_path / "redisplug"
    package.mkdir()
    (package / "__init__.py").write_text("")
    (package / "connection.py").write_text(
        textwrap.dedent(
            """
            PARAMS = {"REDISPLUG_URL": "url", "REDISPLUG_HOST": "host"}

            def from_settings(settings):
                return {dest: settings.get(name) for name, dest in PARAMS.items()}
            """
        )
    )
    (package / "spiders.py").write_text(
        textwrap.dedent(
            """
            import skitter

            from redisplug import connection

            class RedisSpider(skitter.Spider):
                name = "redis"

                @classmethod
                def from_crawler(cls, crawler, *args, **kwargs):
                    spider = super().from_crawler(crawler, *args, **kwargs)
                    spider.server = connection.from_settings(crawler.settings)
                    return spider
            """
        )
    )
    monkeypatch.syspath_prepend(str(tmp_path))
    monkeypatch.delitem(sys.modules, "redisplug", raising=False)
    from redisplug.spiders import RedisSpider  # type: ignore[import-not-found]

    url = "redis://127.0.0.1:1/0"
    assert Crawler(RedisSpider, {"REDISPLUG_URL": url}).settings["REDISPLUG_URL"] == url
    with pytest.raises(ConfigError, match="did you mean 'REDISPLUG_URL'"):
        Crawler(RedisSpider, {"REDISPLUG_URLS": url})
