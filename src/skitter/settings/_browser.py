"""Browser rendering (requests with ``render=True``; ``downloader/browser/``)."""

from __future__ import annotations

from skitter.settings._setting import Setting

__all__ = ["GROUP"]

GROUP: list[Setting] = [
    Setting(
        "BROWSER_RENDER",
        False,
        bool,
        "Render every request in the browser, as if render=True (a spider's `render` "
        "attribute wins); meta['dont_render'] opts one out.",
    ),
    Setting("BROWSER_CONCURRENCY", 2, int, "Pages rendered at once (each in its own context)."),
    Setting(
        "BROWSER_EXECUTABLE_PATH",
        "",
        str,
        "Chromium to run; empty = chromium, chromium-browser or google-chrome on PATH.",
    ),
    Setting(
        "BROWSER_BLOCK_RESOURCES",
        ["image", "media", "font"],
        list,
        "Resource types a rendered page may not load (add 'stylesheet' for speed); [] = none.",
    ),
    Setting(
        "BROWSER_WAIT_UNTIL",
        "load",
        str,
        "When a page counts as loaded: load, domcontentloaded, networkidle or commit "
        "(meta['browser_wait_until'] per request).",
    ),
    Setting(
        "BROWSER_SHARE_COOKIES",
        False,
        bool,
        "Rendered pages use and update the cookie jar of the HTTP requests (CookiesMiddleware).",
    ),
]
