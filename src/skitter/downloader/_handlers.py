"""DOWNLOAD_HANDLERS: Scrapy's per-scheme download handlers, read as skitter's routing.

skitter downloads ``http``/``https`` with the crawl's transport (DOWNLOAD_TRANSPORT, which
may be a transport of the user's own) and ``data:``/``file:`` with its local handler:
that is its built-in table. A Scrapy project's ``DOWNLOAD_HANDLERS`` is merged over it,
per scheme, and each entry is one of:

- ``None``: the scheme is switched off; its requests fail (``IgnoreRequest``, naming
  the setting) without reaching the network, as Scrapy refuses them;
- Scrapy's (or skitter's, by the same path) own handler for that scheme: what skitter
  does anyway, accepted;
- scrapy-playwright's handler (``scrapy_playwright.handler.ScrapyPlaywrightDownloadHandler``)
  for ``http``/``https``: requests with a true ``meta["playwright"]`` are rendered by
  skitter's browser transport, the others go over HTTP, as scrapy-playwright does. Said
  at start, at INFO;
- anything else is refused at start: a handler class of Scrapy's API cannot be run
  (its methods return Twisted Deferreds), and ignoring it would crawl with another
  downloader than the project asked for.

A crawl that sets nothing pays nothing: the route is wrapped only when a scheme is
switched off or mapped to the browser.
"""

from __future__ import annotations

import logging
from collections.abc import Awaitable, Callable, Mapping
from dataclasses import dataclass
from typing import Any

from skitter.exceptions import ConfigError, IgnoreRequest
from skitter.http import Request

__all__ = ["PLAYWRIGHT_HANDLER", "HandlerTable", "handler_table", "with_handlers"]

logger = logging.getLogger("skitter.downloader")

PLAYWRIGHT_HANDLER = "scrapy_playwright.handler.ScrapyPlaywrightDownloadHandler"
_HTTP = ("http", "https")
_PREFIX = ".core.downloader.handlers."
#: Scrapy's own handlers per scheme, which name what skitter does anyway.
_OWN: Mapping[str, frozenset[str]] = {
    scheme: frozenset(
        f"{package}{_PREFIX}{path}" for package in ("scrapy", "skitter") for path in paths
    )
    for scheme, paths in {
        "http": ("http.HTTPDownloadHandler", "http11.HTTP11DownloadHandler"),
        "https": ("http.HTTPDownloadHandler", "http11.HTTP11DownloadHandler"),
        "data": ("datauri.DataURIDownloadHandler",),
        "file": ("file.FileDownloadHandler",),
    }.items()
}


@dataclass(frozen=True, slots=True)
class HandlerTable:
    """The schemes DOWNLOAD_HANDLERS switched off, and those scrapy-playwright's handler
    takes (rendered in the browser when a request asks with ``meta["playwright"]``)."""

    disabled: frozenset[str] = frozenset()
    playwright: frozenset[str] = frozenset()

    @property
    def plain(self) -> bool:
        return not (self.disabled or self.playwright)


def handler_table(value: Any) -> HandlerTable:
    """DOWNLOAD_HANDLERS checked; ConfigError for an entry skitter cannot honour."""
    if not value:
        return HandlerTable()
    if not isinstance(value, Mapping):
        raise ConfigError(f"DOWNLOAD_HANDLERS must be a dict {{scheme: handler}}, not {value!r}")
    disabled: set[str] = set()
    playwright: set[str] = set()
    for key, handler in value.items():
        scheme = str(key).lower()
        if handler is None:
            disabled.add(scheme)
        elif _path(handler) == PLAYWRIGHT_HANDLER and scheme in _HTTP:
            playwright.add(scheme)
        elif _path(handler) not in _OWN.get(scheme, ()):
            raise ConfigError(_refusal(scheme, handler))
    if playwright:
        logger.info(
            "DOWNLOAD_HANDLERS: scrapy-playwright's handler for %s is served by skitter's "
            "browser transport: requests with meta['playwright'] are rendered in Chromium, "
            "the others go over HTTP",
            " and ".join(sorted(playwright)),
        )
    return HandlerTable(frozenset(disabled), frozenset(playwright))


def _path(handler: Any) -> str:
    if isinstance(handler, str):
        return handler
    return f"{getattr(handler, '__module__', '')}.{getattr(handler, '__qualname__', handler)}"


def _refusal(scheme: str, handler: Any) -> str:
    where = f"DOWNLOAD_HANDLERS[{scheme!r}] = {_path(handler)!r}"
    if scheme not in _OWN:
        return (
            f"{where}: skitter downloads http(s), data: and file: only; switch the scheme "
            "off with None, or drop the entry"
        )
    return (
        f"{where}: download handlers of Scrapy's API are not supported (they return "
        "Twisted Deferreds). http(s) goes to DOWNLOAD_TRANSPORT, which may name a "
        "transport of your own; scrapy-playwright's handler maps to the browser "
        f"transport ({PLAYWRIGHT_HANDLER}); None switches a scheme off"
    )


Route = Callable[[Request], Awaitable[Any]]


def with_handlers(route: Route, table: HandlerTable) -> Route:
    """``route`` behind the table: switched-off schemes refused, scrapy-playwright's
    requests sent to the browser. ``route`` itself when there is nothing to do."""
    if table.plain:
        return route
    disabled, playwright = table.disabled, table.playwright

    def handled(request: Request) -> Awaitable[Any]:
        scheme = request.url.partition(":")[0].lower()
        if scheme in disabled:
            raise IgnoreRequest(
                f"unsupported URL scheme {scheme!r}: switched off by DOWNLOAD_HANDLERS",
                request=request,
            )
        if scheme in playwright and request.meta.get("playwright") and request.render is False:
            request.render = True
        return route(request)

    return handled
