"""MetaRefreshMiddleware: ``<meta http-equiv="refresh">`` and the ``Refresh`` header,
followed as redirects.

Scrapy's middleware, settings and order (580, just outside RedirectMiddleware): an HTML
page that sends the client on after a delay of less than METAREFRESH_MAXDELAY seconds
becomes a GET for the new URL, with every rule of an HTTP redirect (REDIRECT_MAX_TIMES,
loop detection, the scope check when it is downloaded, ``redirect_urls`` /
``redirect_reasons`` meta, headers dropped across hosts): it is
``BaseRedirectMiddleware._redirect``, not a copy. ``redirect_reasons`` records
``"meta refresh"`` (Scrapy's word) or ``"refresh header"``.

The ``Refresh`` response header (``5; url=/next``), which browsers honour like the tag,
is read first and for any content type; the tag only in an ``HtmlResponse`` (as Scrapy:
the transport picks the class by Content-Type, file name or body), in the first 4096
characters as Scrapy reads it, outside METAREFRESH_IGNORE_TAGS (``noscript`` by
default: a page's no-JavaScript fallback is not where it sends a browser). w3lib's
``get_meta_refresh`` parses it; a page without ``refresh`` in its head costs one byte
search. Not followed: ``meta["dont_redirect"]``, HEAD requests, pages that are not
HTTP(S), a refresh to the page itself without a URL, a non-HTTP target.

Stats: ``downloader/redirect_count`` and ``downloader/metarefresh_count``.
"""

from __future__ import annotations

import logging
import re
from typing import Any
from urllib.parse import urljoin, urlsplit

from w3lib.html import get_meta_refresh
from w3lib.url import safe_url_string

from skitter._types import CrawlContext
from skitter.downloader.middlewares._redirect import BaseRedirectMiddleware
from skitter.exceptions import ConfigError, NotConfigured
from skitter.http import HtmlResponse, Request, Response
from skitter.settings import DownloaderSettings

__all__ = ["MetaRefreshMiddleware"]

logger = logging.getLogger("skitter.downloader.redirect")

_SCAN = 4096
_UTF16_BOMS = (b"\xff\xfe", b"\xfe\xff")  # the byte search cannot see into these
# "<delay>[;,] [url=]<url>", the header's grammar as browsers parse it.
_REFRESH_HEADER = re.compile(
    r"\s*(?P<delay>\d*\.?\d+)\s*[;,]?\s*(?:url\s*=\s*)?(?P<url>.*)", re.IGNORECASE | re.DOTALL
)


class MetaRefreshMiddleware(BaseRedirectMiddleware):
    """Follows meta refreshes and ``Refresh`` headers by handing back a new Request."""

    def __init__(
        self,
        *args: Any,
        max_delay: float = 100.0,
        ignore_tags: tuple[str, ...] = ("noscript",),
        **kwargs: Any,
    ) -> None:
        super().__init__(*args, **kwargs)
        self.max_delay = max_delay
        self.ignore_tags = ignore_tags

    @classmethod
    def from_crawler(cls, crawler: CrawlContext) -> MetaRefreshMiddleware:
        own = crawler.settings.view(DownloaderSettings)
        if not own.metarefresh_enabled:
            raise NotConfigured
        max_delay = float(own.metarefresh_maxdelay)
        if max_delay < 0:
            raise ConfigError(f"METAREFRESH_MAXDELAY must be 0 or more, got {max_delay}")
        middleware = cls(
            *cls._base_args(crawler),
            max_delay=max_delay,
            ignore_tags=tuple(str(tag) for tag in own.metarefresh_ignore_tags),
        )
        middleware.crawler = crawler
        return middleware

    def process_response(
        self, request: Request, response: Response, spider: Any = None
    ) -> Response | Request:
        if (
            request.method == "HEAD"
            or request.meta.get("dont_redirect")
            or not request.url[:8].lower().startswith(("http://", "https://"))
        ):
            return response  # a data: or file: page sends nobody anywhere, as in Scrapy
        found = self._from_header(response)
        reason = "refresh header"
        if found is None:
            found = self._from_html(response)
            reason = "meta refresh"
        if found is None:
            return response
        delay, target = found
        if delay >= self.max_delay:
            logger.debug(
                "%r: not following %s to %s after %s s (METAREFRESH_MAXDELAY is %s)",
                request,
                reason,
                target,
                delay,
                self.max_delay,
            )
            return response
        if urlsplit(target).scheme not in ("http", "https"):
            logger.debug("%r: not following %s to %r", request, reason, target)
            return response
        redirected = self._redirect(request, response, target, reason, to_get=True)
        self._stats.inc("downloader/metarefresh_count")
        return redirected

    @staticmethod
    def _from_header(response: Response) -> tuple[float, str] | None:
        header = response.header("Refresh")
        if not header:
            return None
        match = _REFRESH_HEADER.match(header)
        if match is None:
            return None
        url = match["url"].strip().strip("\"'")
        if not url:
            return None  # a reload of the same page: no new request to make
        return float(match["delay"]), safe_url_string(urljoin(response.url, url))

    def _from_html(self, response: Response) -> tuple[float, str] | None:
        if not isinstance(response, HtmlResponse):
            return None
        body = response.body
        if not body.startswith(_UTF16_BOMS) and b"refresh" not in body[:_SCAN].lower():
            return None  # the common case: no refresh anywhere near the head (a few us)
        delay, url = get_meta_refresh(
            response.text[:_SCAN],
            response.base_url,
            response.encoding,
            ignore_tags=self.ignore_tags,
        )
        if delay is None or url is None:
            return None
        return delay, url
