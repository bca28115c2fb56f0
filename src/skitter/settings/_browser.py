"""Browser rendering (requests with ``render=True`` or ``"auto"``; ``downloader/browser/``,
``downloader/middlewares/_render_auto``)."""

from __future__ import annotations

from skitter.settings._setting import Setting

__all__ = ["GROUP"]

GROUP: list[Setting] = [
    Setting(
        "BROWSER_RENDER",
        False,
        object,  # True, False or "auto" (strings read as such); AutoRenderMiddleware checks
        "Render every request in the browser, as if render=True, or 'auto': as if "
        "render='auto' (a spider's `render` attribute wins); meta['dont_render'] opts one out.",
    ),
    Setting(
        "BROWSER_RENDER_AUTO_SELECTOR",
        "",
        str,
        "render='auto': a page needs the browser when this CSS selector matches nothing in "
        "its HTTP response (a spider's `render_auto_selector` or `needs_render` wins).",
    ),
    Setting(
        "BROWSER_RENDER_AUTO_LEARN",
        2,
        int,
        "render='auto': pages of a URL pattern go straight to the browser once this many in "
        "a row needed it (one page fine over HTTP resets the count).",
    ),
    Setting(
        "BROWSER_RENDER_AUTO_RECHECK",
        20,
        int,
        "render='auto': every Nth page of a pattern learned as needing the browser is tried "
        "over HTTP first again, to notice a site that changed; 0 = never.",
    ),
    Setting(
        "BROWSER_RENDER_AUTO_PATTERNS",
        10000,
        int,
        "render='auto': URL patterns remembered (least recently used forgotten first).",
    ),
    Setting("BROWSER_CONCURRENCY", 2, int, "Pages rendered at once (each in its own context)."),
    Setting(
        "BROWSER_EXECUTABLE_PATH",
        "",
        str,
        "Chromium to run; empty = chromium, chromium-browser or google-chrome on PATH.",
    ),
    Setting(
        "PLAYWRIGHT_LAUNCH_OPTIONS",
        {},
        dict,
        "scrapy-playwright's launch options, for the browser transport: headless, args "
        "(added to skitter's), executable_path, timeout (ms), env, slow_mo; others refused.",
    ),
    Setting(
        "PLAYWRIGHT_BROWSER_TYPE",
        "chromium",
        str,
        "scrapy-playwright's browser type: the browser transport runs Chromium only.",
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
