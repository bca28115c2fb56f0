"""Finding and starting the system's Chromium for the browser transport.

skitter never downloads a browser of its own (``playwright install`` fetches builds from
the internet, which many crawl machines cannot reach and which then drift from the
distribution's security updates). It drives the Chromium the system package manager
installed, found in this order: the BROWSER_EXECUTABLE_PATH setting, then ``chromium``,
``chromium-browser``, ``google-chrome`` and ``google-chrome-stable`` on ``PATH`` and in
``/usr/bin``. When Chromium or Playwright is missing, ``BrowserUnavailable`` says what
to install.

Playwright is an optional dependency (``pip install skitter[browser]``): it is imported
here, on the first rendered request, and never by a crawl that renders nothing.
"""

from __future__ import annotations

import importlib.util
import os
import shutil
from typing import TYPE_CHECKING, Any

from skitter.settings import BrowserSettings, Settings

if TYPE_CHECKING:
    from playwright.async_api import Browser, Playwright

__all__ = [
    "CHROMIUM_ARGS",
    "BrowserUnavailable",
    "browser_problem",
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


class BrowserUnavailable(Exception):
    """Chromium or Playwright cannot be used; the message says what to install.

    Not a ``SkitterError``: the transport turns it into a ``RequestError`` naming the
    request, once per request, and logs the hint once per crawl.
    """


def find_chromium(settings: Settings) -> str:
    """The Chromium executable to run; ``BrowserUnavailable`` if there is none."""
    configured = settings.view(BrowserSettings).browser_executable_path
    if configured:
        path = shutil.which(configured) or configured
        if not (os.path.isfile(path) and os.access(path, os.X_OK)):
            raise BrowserUnavailable(
                f"BROWSER_EXECUTABLE_PATH {configured!r} is not an executable file; "
                + _INSTALL_HINT
            )
        return path
    for name in _CANDIDATES:
        found = shutil.which(name) or shutil.which(name, path="/usr/bin")
        if found:
            return found
    raise BrowserUnavailable(
        f"no Chromium found (looked for {', '.join(_CANDIDATES)}): " + _INSTALL_HINT
    )


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


async def launch_chromium(playwright: Playwright, executable: str) -> Browser:
    """A headless Chromium from ``executable``, with skitter's flags."""
    from playwright.async_api import Error as PlaywrightError

    options: dict[str, Any] = {
        "executable_path": executable,
        "headless": True,
        "args": list(CHROMIUM_ARGS),
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
