"""scrapy-playwright's PLAYWRIGHT_LAUNCH_OPTIONS (and PLAYWRIGHT_BROWSER_TYPE) for the
browser transport: what maps onto its launch is honoured, on the system's real Chromium;
the rest is refused when the transport is built, at the crawl's start."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from skitter.downloader import BrowserTransport
from skitter.engine import Stats
from skitter.exceptions import ConfigError, RequestError
from skitter.http import Request
from skitter.settings import Settings

from .conftest import FAST, ITEM_COUNT, JsSite, chromium_pids


def _transport(options: Any, **settings: Any) -> BrowserTransport:
    values = {**FAST, "PLAYWRIGHT_LAUNCH_OPTIONS": options, **settings}
    return BrowserTransport(Settings(values), Stats())


def _proc(pid: int) -> tuple[list[bytes], bytes]:
    """A process's command line (its arguments) and environment, as /proc has them."""
    proc = Path(f"/proc/{pid}")
    return (proc / "cmdline").read_bytes().split(b"\0"), (proc / "environ").read_bytes()


async def test_launch_options_reach_chromium(site: tuple[JsSite, str]) -> None:
    _, base = site
    options = {
        "headless": True,
        "executable_path": "/usr/bin/chromium",
        "args": ["--lang=eo"],
        "timeout": 60_000,
        "env": {"SKITTER_LAUNCH_MARK": "launched"},
    }
    browser = _transport(options)
    await browser.open()
    try:
        response = await browser.fetch(Request(base + "/items", render=True))
        assert len(response.css("a.item")) == ITEM_COUNT
        (pid,) = chromium_pids()
        command, environ = _proc(pid)
        assert b"--lang=eo" in command  # after skitter's own flags, which stay
        assert b"--no-sandbox" in command and b"--headless" in b" ".join(command)
        assert b"SKITTER_LAUNCH_MARK=launched" in environ
    finally:
        await browser.close()


async def test_the_executable_path_is_the_browser_run() -> None:
    browser = _transport({"executable_path": "/nonexistent/chromium"})
    await browser.open()
    try:
        with pytest.raises(
            RequestError,
            match=r"LAUNCH_OPTIONS\['executable_path'\] '/nonexistent/chromium' is not an",
        ):
            await browser.fetch(Request("http://127.0.0.1/", render=True))
    finally:
        await browser.close()


@pytest.mark.parametrize(
    ("options", "settings", "message"),
    [
        ({"channel": "chrome"}, {}, r"\['channel'\] is not supported: the browser is the system"),
        ({"handle_sigint": True}, {}, "the crawl handles signals itself"),
        ({"firefox_user_prefs": {}}, {}, r"not supported by skitter's browser transport"),
        ({"headless": "no"}, {}, "must be True or False"),
        ({"args": "--lang=eo"}, {}, "must be a list of command-line flags"),
        ({"timeout": -1}, {}, "must be milliseconds"),
        ({}, {"PLAYWRIGHT_BROWSER_TYPE": "firefox"}, "runs Chromium only"),
        (
            {"executable_path": "/usr/bin/chromium"},
            {"BROWSER_EXECUTABLE_PATH": "/opt/other/chrome"},
            "name two browsers: set one",
        ),
    ],
)
def test_what_cannot_be_honoured_is_refused_when_the_transport_is_built(
    options: dict[str, Any], settings: dict[str, Any], message: str
) -> None:
    with pytest.raises(ConfigError, match=message):
        _transport(options, **settings)
