"""Settings: layers, types from strings, typo detection."""

from __future__ import annotations

import pytest

from skitter import ConfigError, Crawler, Settings, Spider
from skitter.settings import SETTINGS, BrowserSettings, DownloaderSettings


def test_defaults() -> None:
    s = Settings()
    assert s["CONCURRENT_REQUESTS"] == 16
    assert s["RETRY_HTTP_CODES"] == [408, 429, 500, 502, 503, 504, 522, 524]
    assert s.source("CONCURRENT_REQUESTS") == "default"


def test_layers_in_order() -> None:
    s = Settings.resolve(
        project={"CONCURRENT_REQUESTS": 1, "DOWNLOAD_DELAY": 1},
        spider={"CONCURRENT_REQUESTS": 2, "USER_AGENT": "spider"},
        env={"SKITTER_CONCURRENT_REQUESTS": "3", "SKITTER_USER_AGENT": "env"},
        cli={"USER_AGENT": "cli"},
    )
    assert s["CONCURRENT_REQUESTS"] == 3 and s.source("CONCURRENT_REQUESTS") == "env"
    assert s["USER_AGENT"] == "cli"
    assert s["DOWNLOAD_DELAY"] == 1.0 and isinstance(s["DOWNLOAD_DELAY"], float)


@pytest.mark.parametrize(
    ("name", "raw", "value"),
    [
        ("ROBOTSTXT_OBEY", "yes", True),
        ("ROBOTSTXT_OBEY", "0", False),
        ("RETRY_HTTP_CODES", "500,503", [500, 503]),
        ("RETRY_HTTP_CODES", "[429]", [429]),
        ("DEFAULT_REQUEST_HEADERS", '{"A": "b"}', {"A": "b"}),
        ("DOWNLOAD_TIMEOUT", "2.5", 2.5),
    ],
)
def test_strings_are_parsed_by_type(name: str, raw: str, value: object) -> None:
    assert Settings.resolve(cli={name: raw}, env={})[name] == value


def test_bad_values_and_typos_are_clear_errors() -> None:
    with pytest.raises(ConfigError, match="CONCURRENT_REQUESTS"):
        Settings({"CONCURRENT_REQUESTS": "many"})
    with pytest.raises(ConfigError, match="did you mean 'CONCURRENT_REQUESTS'"):
        Crawler(Spider, {"CONCURENT_REQUESTS": 3})  # once the crawl's readers are known
    with pytest.raises(ConfigError, match="must be int"):
        Settings({"CONCURRENT_REQUESTS": [1]})


def test_unknown_names_are_kept_for_plugins() -> None:
    """Kept by Settings: whether a component reads them is the Crawler's check."""
    s = Settings({"MYPLUGIN_LEVEL": 3})
    assert s["MYPLUGIN_LEVEL"] == 3 and "MYPLUGIN_LEVEL" in list(s)


def test_mutable_defaults_are_not_shared() -> None:
    s = Settings()
    s["RETRY_HTTP_CODES"].append(999)
    assert 999 not in Settings()["RETRY_HTTP_CODES"]


def test_a_library_crawler_reads_no_environment(monkeypatch: pytest.MonkeyPatch) -> None:
    """The environment is the CLI's layer (tests/cli/test_cli.py): a program that builds
    a Crawler gets the same crawl whatever its process environment holds."""
    monkeypatch.setenv("SKITTER_CLOSESPIDER_ITEMCOUNT", "3")
    monkeypatch.setenv("SKITTER_STATSMAILER_RCPTS", "ops@example.com")  # refused if read

    class Quiet(Spider):
        name = "quiet"

    assert Crawler(Quiet).settings["CLOSESPIDER_ITEMCOUNT"] == 0
    assert Settings.resolve()["CLOSESPIDER_ITEMCOUNT"] == 0
    with pytest.raises(ConfigError, match="STATSMAILER_RCPTS"):
        Crawler(Quiet, env={"SKITTER_STATSMAILER_RCPTS": "ops@example.com"})
    chosen = Crawler(Quiet, env={"SKITTER_CLOSESPIDER_ITEMCOUNT": "3"})
    assert chosen.settings["CLOSESPIDER_ITEMCOUNT"] == 3
    assert chosen.settings.source("CLOSESPIDER_ITEMCOUNT") == "env"


def test_views_are_frozen_and_built_once_per_settings() -> None:
    s = Settings({"RETRY_HTTP_CODES": [500], "USER_AGENT": "me", "BROWSER_CONCURRENCY": 4})
    view = s.view(DownloaderSettings)
    assert view is s.view(DownloaderSettings)
    assert view.retry_http_codes == (500,) and view.user_agent == "me"
    assert view.download_timeout == s["DOWNLOAD_TIMEOUT"]
    with pytest.raises(AttributeError):
        view.user_agent = "other"  # type: ignore[misc]  # the point: it is frozen
    with pytest.raises(TypeError):
        view.default_request_headers["X"] = "y"  # type: ignore[index]  # read-only
    assert s.view(BrowserSettings).browser_concurrency == 4
    assert s.with_layer({"USER_AGENT": "new"}, "cli").view(DownloaderSettings).user_agent == "new"


def test_every_view_field_is_a_known_setting() -> None:
    import dataclasses

    for view in (DownloaderSettings, BrowserSettings):
        for field in dataclasses.fields(view):
            assert field.name.upper() in SETTINGS, (view.__name__, field.name)
