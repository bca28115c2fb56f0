"""The browser pool: one lazily started Chromium, and at most N pages open in it.

Every rendered request gets a fresh browser context (its own cookies, cache and
storage) holding one page. Contexts are cheap in Chromium (milliseconds), and a fresh
one makes pages independent of each other and of the order the scheduler runs them
in: a retry starts clean, and the only state that carries over between pages is the
cookie jar the transport seeds it from when BROWSER_SHARE_COOKIES asks for it. The pool
bounds the open contexts to BROWSER_CONCURRENCY, separately from CONCURRENT_REQUESTS,
because a rendering page costs a hundred times the memory and CPU of an HTTP request.

Lifetime:

- Nothing starts until the first ``acquire``: a crawl that never renders never starts
  Playwright's driver or Chromium.
- A browser that died (crashed, killed, out of memory) is noticed on the next
  ``acquire`` and started again; each start bumps ``generation``, so the transport can
  tell a page of a dead browser (its request failed with a retryable ConnectionLost)
  from a page that failed on its own.
- A page kept for the spider (``meta["browser_keep_page"]``) holds its slot until the
  spider closes it; its context is closed on the pool's next use or at ``close()``.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
from typing import TYPE_CHECKING, Any

from skitter.downloader.browser._launch import (
    BrowserUnavailable,
    LaunchOptions,
    executable_setting,
    find_chromium,
    launch_chromium,
    start_playwright,
)
from skitter.settings import BrowserSettings

if TYPE_CHECKING:
    from playwright.async_api import Browser, BrowserContext, Page, Playwright

    from skitter._types import StatsSink
    from skitter.settings import Settings

__all__ = ["BrowserPool", "PageLease"]

logger = logging.getLogger("skitter.downloader.browser")

_CLOSE_TIMEOUT = 5.0  # seconds; closing a context of a hung or dead browser must not hang


class PageLease:
    """One page in its own context, holding one of the pool's slots until closed."""

    __slots__ = ("_pool", "_released", "context", "generation", "page")

    def __init__(self, pool: BrowserPool, context: BrowserContext, page: Page, generation: int):
        self._pool = pool
        self._released = False
        self.context = context
        self.page = page
        self.generation = generation

    @property
    def browser_alive(self) -> bool:
        """False when the browser this page lived in has died (or been replaced)."""
        return self._pool.is_alive(self.generation)

    async def close(self) -> None:
        """Close the page's context and free the slot. Safe to call twice."""
        if self._release():
            await _close_quietly(self.context)

    def keep(self) -> None:
        """Hand the page to the spider: the slot is freed when the spider closes it."""
        self._pool._kept.add(self)
        self.page.once("close", lambda _page: self._on_page_closed())

    def _on_page_closed(self) -> None:
        if self._release():
            self._pool._orphans.append(self.context)  # closed (awaited) on the next acquire

    def _release(self) -> bool:
        if self._released:
            return False
        self._released = True
        self._pool._kept.discard(self)
        self._pool._slots.release()
        return True


class BrowserPool:
    """Chromium and its pages; ``acquire`` a page, ``close`` the whole thing."""

    def __init__(self, settings: Settings, stats: StatsSink) -> None:
        self._settings = settings
        self._stats = stats
        #: PLAYWRIGHT_LAUNCH_OPTIONS, checked now: refused at start, not at first render.
        self._launch_options = LaunchOptions.from_settings(settings)
        executable_setting(settings)  # the path is checked at start too
        self.concurrency: int = max(1, int(settings.view(BrowserSettings).browser_concurrency))
        self._slots = asyncio.Semaphore(self.concurrency)
        self._lock = asyncio.Lock()
        self._playwright: Playwright | None = None
        self._browser: Browser | None = None
        self._generation = 0
        self._unavailable: BrowserUnavailable | None = None
        self._kept: set[PageLease] = set()
        self._orphans: list[BrowserContext] = []
        self._closed = False

    @property
    def started(self) -> bool:
        """True once Chromium has been launched (and not closed since)."""
        return self._browser is not None

    @property
    def generation(self) -> int:
        """How many times Chromium was launched; the current browser's number."""
        return self._generation

    def is_alive(self, generation: int) -> bool:
        browser = self._browser
        return generation == self._generation and browser is not None and browser.is_connected()

    async def acquire(self, **context_options: Any) -> PageLease:
        """A new page in a new context; waits for a free slot, starts Chromium if needed.

        Raises ``BrowserUnavailable`` (Chromium or Playwright missing, or not starting)
        and Playwright's errors (the browser died while the context was being made).
        """
        if self._closed:
            raise RuntimeError("BrowserPool.acquire() after close()")
        await self._slots.acquire()
        try:
            if self._orphans:
                await self._close_orphans()
            browser = await self._ensure_browser()
            generation = self._generation
            context = await browser.new_context(**context_options)
            try:
                page = await context.new_page()
            except BaseException:
                await _close_quietly(context)
                raise
        except BaseException:
            self._slots.release()
            raise
        self._stats.inc("browser/page_count")
        return PageLease(self, context, page, generation)

    async def _ensure_browser(self) -> Browser:
        async with self._lock:
            browser = self._browser
            if browser is not None and browser.is_connected():
                return browser
            if self._unavailable is not None:
                raise self._unavailable
            if browser is not None:
                self._stats.inc("browser/restart_count")
                logger.warning("Chromium has died; starting it again")
                self._forget_kept_pages()
                await _close_quietly(browser)
            self._browser = None
            self._browser = await self._launch()
            self._generation += 1
            self._stats.inc("browser/launch_count")
            return self._browser

    async def _launch(self) -> Browser:
        try:
            executable = find_chromium(self._settings)
        except BrowserUnavailable as exc:
            self._unavailable = exc  # will not appear during the crawl: stop looking
            raise
        if self._playwright is None:
            try:
                self._playwright = await start_playwright()
            except BrowserUnavailable as exc:
                self._unavailable = exc
                raise
        try:
            return await launch_chromium(self._playwright, executable, self._launch_options)
        except BrowserUnavailable:
            # Perhaps Playwright's driver is what died: start it again, then try once more.
            await self._stop_playwright()
            self._playwright = await start_playwright()
            return await launch_chromium(self._playwright, executable, self._launch_options)

    def _forget_kept_pages(self) -> None:
        """Pages kept by the spider died with their browser: free their slots."""
        for lease in list(self._kept):
            lease._release()

    async def _close_orphans(self) -> None:
        orphans, self._orphans = self._orphans, []
        for context in orphans:
            await _close_quietly(context)

    async def _stop_playwright(self) -> None:
        playwright, self._playwright = self._playwright, None
        if playwright is not None:
            with contextlib.suppress(Exception):
                async with asyncio.timeout(_CLOSE_TIMEOUT):
                    await playwright.stop()

    async def close(self) -> None:
        """Close every context, Chromium and Playwright's driver."""
        self._closed = True
        async with self._lock:
            for lease in list(self._kept):
                await lease.close()
            await self._close_orphans()
            browser, self._browser = self._browser, None
            if browser is not None:
                await _close_quietly(browser)
            await self._stop_playwright()


async def _close_quietly(closable: Browser | BrowserContext) -> None:
    """Close, ignoring the errors of something already dead; never hang."""
    with contextlib.suppress(Exception):
        async with asyncio.timeout(_CLOSE_TIMEOUT):
            await closable.close()
