"""Finding and starting the system's Chromium for the browser transport.

skitter never downloads a browser of its own (``playwright install`` fetches builds from
the internet, which many crawl machines cannot reach and which then drift from the
distribution's security updates). It drives the Chromium the system package manager
installed, found in this order: the BROWSER_EXECUTABLE_PATH setting, then ``chromium``,
``chromium-browser``, ``google-chrome`` and ``google-chrome-stable`` on ``PATH`` and in
``/usr/bin``. When Chromium or Playwright is missing, ``BrowserUnavailable`` says what
to install.

scrapy-playwright's ``PLAYWRIGHT_LAUNCH_OPTIONS`` (Playwright's ``launch()`` keywords) is
honoured where it maps onto this launch (``LaunchOptions``): ``headless``, ``args`` (after
skitter's own flags), ``executable_path`` (as BROWSER_EXECUTABLE_PATH), ``timeout``,
``env`` and ``slow_mo``. Any other key is refused when the crawl starts, with why: the
signal handling is the crawl's, the browser is the system's Chromium (no ``channel``),
and skitter's own flags keep pages in the crawl's scope (no ``ignore_default_args``).
``PLAYWRIGHT_BROWSER_TYPE`` may only be ``chromium``.

Playwright is an optional dependency (``pip install skitter[browser]``): it is imported
here, on the first rendered request, and never by a crawl that renders nothing.
"""

from __future__ import annotations

import importlib.util
import os
import shutil
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from skitter.exceptions import ConfigError
from skitter.settings import BrowserSettings, Settings

if TYPE_CHECKING:
    from playwright.async_api import Browser, Playwright

__all__ = [
    "CHROMIUM_ARGS",
    "BrowserUnavailable",
    "LaunchOptions",
    "browser_problem",
    "executable_setting",
    "find_chromium",
    "launch_chromium",
    "start_playwright",
]

# Headless, and quiet: no GPU, no sandbox (crawl workers often run as root or in
# containers without user namespaces), and none of the background traffic (updates,
# sync, safe-browsing lists) a crawler must not send to hosts it was not asked to fetch.
# No site isolation: a cross-site iframe then stays in its page's DevTools target, where
# the scope guard (_scope) intercepts its requests and redirects; each page has
# a fresh context and no user data, so there is nothing for it to protect.
CHROMIUM_ARGS = (
    "--no-sandbox",
    "--disable-site-isolation-trials",
    "--disable-gpu",
    "--disable-dev-shm-usage",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
    "--no-first-run",
)
_CANDIDATES = ("chromium", "chromium-browser", "google-chrome", "google-chrome-stable")
_INSTALL_HINT = (
    "install Chromium from the system packages (Debian/Ubuntu: `apt-get install chromium`) "
    "or set BROWSER_EXECUTABLE_PATH to a Chromium or Chrome executable"
)


_OPTIONS = "PLAYWRIGHT_LAUNCH_OPTIONS"
#: Launch keys skitter cannot honour, and why (any other unknown key: not Chromium's).
_REFUSED_KEYS: Mapping[str, str] = {
    "channel": "the browser is the system's Chromium: set executable_path instead",
    "chromium_sandbox": "skitter runs Chromium without its sandbox (--no-sandbox)",
    "ignore_default_args": "skitter's own flags keep rendered pages in the crawl's scope",
    "handle_sigint": "the crawl handles signals itself (graceful shutdown)",
    "handle_sigterm": "the crawl handles signals itself (graceful shutdown)",
    "handle_sighup": "the crawl handles signals itself (graceful shutdown)",
    "proxy": "set meta['proxy'] per request, or HTTPPROXY / PROXY_POOL",
    "devtools": "deprecated by Playwright; use headless=False and args",
}


@dataclass(frozen=True, slots=True)
class LaunchOptions:
    """How Chromium is launched: PLAYWRIGHT_LAUNCH_OPTIONS, checked."""

    headless: bool = True
    args: tuple[str, ...] = ()
    executable_path: str = ""
    timeout: float | None = None  # milliseconds, as Playwright's
    env: Mapping[str, str] | None = None
    slow_mo: float | None = None  # milliseconds
    extra: Mapping[str, Any] = field(default_factory=dict)

    @classmethod
    def from_settings(cls, settings: Settings) -> LaunchOptions:
        """The launch options of ``settings``; ConfigError for what cannot be honoured."""
        own = settings.view(BrowserSettings)
        kind = str(own.playwright_browser_type).strip().lower()
        if kind != "chromium":
            raise ConfigError(
                f"PLAYWRIGHT_BROWSER_TYPE = {own.playwright_browser_type!r}: skitter's "
                "browser transport runs Chromium only; use 'chromium'"
            )
        given = own.playwright_launch_options
        if not isinstance(given, Mapping):
            raise ConfigError(f"{_OPTIONS} must be a dict of Playwright launch options")
        options: dict[str, Any] = {}
        for key, value in given.items():
            options[key] = _checked(str(key), value)
        return cls(**options)

    def keywords(self) -> dict[str, Any]:
        """The options as ``launch()`` keywords, besides skitter's own."""
        out: dict[str, Any] = {}
        if self.timeout is not None:
            out["timeout"] = self.timeout
        if self.env is not None:
            out["env"] = dict(self.env)
        if self.slow_mo is not None:
            out["slow_mo"] = self.slow_mo
        return out


def _checked(key: str, value: Any) -> Any:
    """One launch option, as ``LaunchOptions`` keeps it; ConfigError when refused."""
    where = f"{_OPTIONS}[{key!r}]"
    if key in _REFUSED_KEYS:
        raise ConfigError(f"{where} is not supported: {_REFUSED_KEYS[key]}")
    if key == "headless":
        if not isinstance(value, bool):
            raise ConfigError(f"{where} must be True or False, got {value!r}")
        return value
    if key == "args":
        if not isinstance(value, list | tuple) or not all(isinstance(a, str) for a in value):
            raise ConfigError(f"{where} must be a list of command-line flags, got {value!r}")
        return tuple(value)
    if key == "executable_path":
        if not isinstance(value, str | os.PathLike):
            raise ConfigError(f"{where} must be a path, got {value!r}")
        return os.fspath(value)
    if key in ("timeout", "slow_mo"):
        if isinstance(value, bool) or not isinstance(value, int | float) or value < 0:
            raise ConfigError(f"{where} must be milliseconds (a number >= 0), got {value!r}")
        return float(value)
    if key == "env":
        if not isinstance(value, Mapping):
            raise ConfigError(f"{where} must be a dict of environment variables, got {value!r}")
        return {str(k): str(v) for k, v in value.items()}
    honoured = "headless, args, executable_path, timeout, env, slow_mo"
    raise ConfigError(f"{where} is not supported by skitter's browser transport ({honoured} are)")


class BrowserUnavailable(Exception):
    """Chromium or Playwright cannot be used; the message says what to install.

    Not a ``SkitterError``: the transport turns it into a ``RequestError`` naming the
    request, once per request, and logs the hint once per crawl.
    """


def find_chromium(settings: Settings) -> str:
    """The Chromium executable to run; ``BrowserUnavailable`` if there is none."""
    configured = executable_setting(settings)
    if configured:
        path = shutil.which(configured) or configured
        if not (os.path.isfile(path) and os.access(path, os.X_OK)):
            source = (
                "BROWSER_EXECUTABLE_PATH"
                if settings.view(BrowserSettings).browser_executable_path
                else f"{_OPTIONS}['executable_path']"
            )
            raise BrowserUnavailable(
                f"{source} {configured!r} is not an executable file; " + _INSTALL_HINT
            )
        return path
    for name in _CANDIDATES:
        found = shutil.which(name) or shutil.which(name, path="/usr/bin")
        if found:
            return found
    raise BrowserUnavailable(
        f"no Chromium found (looked for {', '.join(_CANDIDATES)}): " + _INSTALL_HINT
    )


def executable_setting(settings: Settings) -> str:
    """BROWSER_EXECUTABLE_PATH, or PLAYWRIGHT_LAUNCH_OPTIONS' executable_path; both set
    to two paths is refused (which one would run?)."""
    own = settings.view(BrowserSettings).browser_executable_path
    launch = LaunchOptions.from_settings(settings).executable_path
    if own and launch and own != launch:
        raise ConfigError(
            f"BROWSER_EXECUTABLE_PATH {own!r} and {_OPTIONS}['executable_path'] {launch!r} "
            "name two browsers: set one"
        )
    return own or launch


def browser_problem(settings: Settings | None = None) -> str | None:
    """Why pages cannot be rendered here (Playwright or Chromium missing), or None.

    ``settings`` gives BROWSER_EXECUTABLE_PATH; without, the defaults (no environment:
    the CLI's settings come in through a crawler's)."""
    if importlib.util.find_spec("playwright") is None:
        return "Playwright is not installed: pip install 'skitter[browser]'"
    try:
        find_chromium(settings if settings is not None else Settings())
    except BrowserUnavailable as exc:
        return str(exc)
    return None


async def start_playwright() -> Playwright:
    """Start Playwright's driver process; ``BrowserUnavailable`` when not installed."""
    try:
        from playwright.async_api import async_playwright
    except ImportError:
        raise BrowserUnavailable(
            "rendering needs Playwright: pip install 'skitter[browser]' (or playwright>=1.40); "
            "its browsers are not needed, skitter uses the system's Chromium"
        ) from None
    return await async_playwright().start()


async def launch_chromium(
    playwright: Playwright, executable: str, launch: LaunchOptions | None = None
) -> Browser:
    """Chromium from ``executable``, with skitter's flags and ``launch``'s options
    (headless unless they say otherwise)."""
    from playwright.async_api import Error as PlaywrightError

    launch = launch if launch is not None else LaunchOptions()
    options: dict[str, Any] = {
        **launch.keywords(),
        "executable_path": executable,
        "headless": launch.headless,
        "args": [*CHROMIUM_ARGS, *launch.args],
        # The crawl handles Ctrl-C itself (graceful shutdown); Playwright must not kill
        # the browser under the requests that are being finished.
        "handle_sigint": False,
        "handle_sigterm": False,
        "handle_sighup": False,
    }
    try:
        return await playwright.chromium.launch(**options)
    except PlaywrightError as exc:
        first_line = str(exc).strip().splitlines()[0] if str(exc).strip() else repr(exc)
        raise BrowserUnavailable(
            f"cannot start Chromium {executable!r}: {first_line}; " + _INSTALL_HINT
        ) from exc
