"""``render="auto"``: over HTTP first, in the browser only for the pages that need it.

A request is "auto" when it says ``render="auto"``, or when it leaves ``render`` at
False and the spider's ``render`` attribute (else BROWSER_RENDER) is ``"auto"`` and
``meta["dont_render"]`` is not set. For such a request this middleware:

1. fetches it over HTTP through the layers inside it (``bind_inner``: retries,
   redirects, cookies, the scope guard, DOWNLOAD_TIMEOUT, all as for any request);
2. asks the spider's check whether the page needs rendering: its ``needs_render(
   response) -> bool`` method (sync or async) if it has one, else the CSS selector of
   its ``render_auto_selector`` attribute or BROWSER_RENDER_AUTO_SELECTOR (the page
   needs rendering when the selector matches nothing; only HTML is checked). Only
   2xx responses are checked: an error page or a redirect goes on as it is;
3. if it does, downloads a copy of the request with ``render=True`` through the same
   layers and returns that: the callback only ever sees the rendered response. The
   copy is taken before the inner layers touch the request, so the HTTP attempt's
   cookies header, validators or proxy marks do not leak into the browser's. It has
   ``meta["dont_cache"]``: HTTPCACHE keys entries by fingerprint alone, so the HTTP
   attempt's cached page would otherwise be served as the rendered one. And it is not
   a recrawl (``age=-1``, no ``auto_recrawl``; the copy is never scheduled, the task's
   own fields are what the frontier keeps): the HTTP attempt has just stored the page's
   validators, which would make the browser's navigation a 304.

Both downloads belong to one task (one slot, one retry count); a failure of either
fails the task's attempt as any download failure does, and the retry starts at step 1.
Per URL pattern (``_render_memory``), pages that needed rendering BROWSER_RENDER_AUTO_LEARN
times in a row teach the pattern to go straight to the browser (step 3 only).

Stats: ``render_auto/http_enough`` (the HTTP response went on), ``render_auto/rendered``
(checked, then rendered), ``render_auto/skipped_http`` (pattern known: rendered without
the HTTP try), ``render_auto/patterns_learned``.

Refusals, loud: a spider or BROWSER_RENDER that says ``"auto"`` without a check is a
ConfigError at start; a request with ``render="auto"`` reaching a spider without a
check, or a Downloader without this middleware, stops the crawl (FatalError).
"""

from __future__ import annotations

import inspect
from collections.abc import Awaitable, Callable
from typing import Any

from parsel import Selector

from skitter._types import CrawlContext, StatsSink
from skitter.downloader._middleware import DownloadHandler, DownloadResult
from skitter.downloader.middlewares._render_memory import RenderMemory, url_pattern
from skitter.exceptions import ConfigError, FatalError
from skitter.http import HtmlResponse, RenderMode, Request, Response
from skitter.settings import BrowserSettings, DownloaderSettings

__all__ = ["AutoRenderMiddleware", "render_default"]

Check = Callable[[Response], Awaitable[bool]]

_TRUE = frozenset({"1", "true", "yes", "on"})
_FALSE = frozenset({"0", "false", "no", "off", ""})


def render_default(spider: Any, setting: object) -> RenderMode:
    """How the spider's requests that leave ``render`` at False are downloaded: its
    ``render`` attribute (True, False or "auto", as ``Request`` takes), else
    BROWSER_RENDER (``setting``; strings from the environment or the command line read
    as true/false/auto). ConfigError otherwise."""
    own = getattr(spider, "render", None)
    value, source = (setting, "setting BROWSER_RENDER") if own is None else (own, "spider.render")
    if value is True or value is False or value == "auto":
        return value
    if isinstance(value, str) and own is None:
        text = value.strip().lower()
        if text == "auto":
            return "auto"
        if text in _TRUE:
            return True
        if text in _FALSE:
            return False
    raise ConfigError(f"{source} must be True, False or 'auto', got {value!r}")


class AutoRenderMiddleware:
    """Renders an "auto" request only when the spider's check says its page needs it,
    and learns which URL patterns always do (the module says how)."""

    def __init__(
        self,
        stats: StatsSink,
        memory: RenderMemory,
        *,
        default: RenderMode = False,
        selector: str = "",
    ) -> None:
        self._stats = stats
        #: What has been learned per URL pattern (``_render_memory``).
        self.memory = memory
        #: How requests that leave ``render`` at False are downloaded (``render_default``).
        self.default = default
        self._default_auto = default == "auto"
        self._selector = selector
        self._fetch: DownloadHandler | None = None
        self._checks: tuple[Any, Check] | None = None  # the spider's, built once

    @classmethod
    def from_crawler(cls, crawler: CrawlContext) -> AutoRenderMiddleware:
        settings = crawler.settings.view(BrowserSettings)
        spider = crawler.spider
        default = render_default(spider, crawler.settings.view(DownloaderSettings).browser_render)
        selector = getattr(spider, "render_auto_selector", None)
        if selector is None:
            selector = settings.browser_render_auto_selector
        if not isinstance(selector, str):
            raise ConfigError(f"render_auto_selector must be a CSS selector, got {selector!r}")
        if selector:
            try:
                Selector(text="<html></html>").css(selector)
            except Exception as exc:  # cssselect's SelectorError, and ValueError
                raise ConfigError(f"render='auto': bad CSS selector {selector!r}: {exc}") from None
        has_method = callable(getattr(spider, "needs_render", None))
        if default == "auto" and not selector and not has_method:
            raise ConfigError(_NO_CHECK)
        try:
            memory = RenderMemory(
                learn=settings.browser_render_auto_learn,
                recheck=settings.browser_render_auto_recheck,
                size=settings.browser_render_auto_patterns,
            )
        except ValueError as exc:
            raise ConfigError(str(exc)) from None
        return cls(crawler.stats, memory, default=default, selector=selector)

    def bind_inner(self, fetch: DownloadHandler) -> None:
        """Called by the Downloader with the layers inside this one, ending at the
        transport the request asks for (HTTP, or the browser for ``render=True``)."""
        self._fetch = fetch

    def process_request(
        self, request: Request, spider: Any = None
    ) -> Awaitable[DownloadResult] | None:
        # Plain function: a request that is not "auto" costs one call and no coroutine.
        render = request.render
        if render is False:
            if not self._default_auto or request.meta.get("dont_render"):
                return None
        elif render is True:
            return None
        return self._auto(request, spider)

    async def _auto(self, request: Request, spider: Any) -> DownloadResult:
        fetch = self._fetch
        if fetch is None:
            raise FatalError(
                f"{request!r} asks for render='auto', but AutoRenderMiddleware was not bound "
                "by a Downloader"
            )
        check = self._check(spider, request)
        rendered = request.replace(render=True, age=-1, auto_recrawl=False)
        rendered.meta["dont_cache"] = True
        pattern = url_pattern(request.parsed_url)
        memory = self.memory
        stats = self._stats
        if memory.straight_to_browser(pattern):
            stats.inc("render_auto/skipped_http")
            return await fetch(rendered)
        result = await fetch(request)
        if not isinstance(result, Response) or not 200 <= result.status < 300:
            return result
        if not await check(result):
            memory.observe(pattern, needed=False)
            stats.inc("render_auto/http_enough")
            return result
        if memory.observe(pattern, needed=True):
            stats.inc("render_auto/patterns_learned")
        stats.inc("render_auto/rendered")
        return await fetch(rendered)

    def _check(self, spider: Any, request: Request) -> Check:
        """The spider's check as one async callable; FatalError when it has none."""
        known = self._checks
        if known is not None and known[0] is spider:
            return known[1]
        method = getattr(spider, "needs_render", None)
        if callable(method):
            check = _method_check(method)
        elif self._selector:
            check = _selector_check(self._selector)
        else:
            raise FatalError(f"{request!r}: {_NO_CHECK}")
        self._checks = (spider, check)
        return check


_NO_CHECK = (
    "render='auto' needs the spider's check of whether a page needs the browser: define "
    "needs_render(self, response) -> bool on the spider, or set its render_auto_selector "
    "attribute or BROWSER_RENDER_AUTO_SELECTOR to a CSS selector that a complete page matches"
)


def _method_check(method: Callable[[Response], Any]) -> Check:
    async def check(response: Response) -> bool:
        answer = method(response)
        if inspect.isawaitable(answer):
            answer = await answer
        if answer is not True and answer is not False:
            raise TypeError(f"needs_render({response!r}) must return a bool, got {answer!r}")
        return answer

    return check


def _selector_check(selector: str) -> Check:
    async def check(response: Response) -> bool:
        # Only HTML can be completed by a browser's JavaScript; JSON, images and the
        # like are what they are.
        return isinstance(response, HtmlResponse) and not response.css(selector)

    return check
