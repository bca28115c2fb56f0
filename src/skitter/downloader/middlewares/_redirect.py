"""RedirectMiddleware: turns a 3xx response with ``Location`` into a new Request.

Scrapy's behaviour and meta keys. The redirected request goes back to the scheduler
(the Downloader returns a Request, which means "schedule this instead"), so it passes
the dupe filter like any other request but keeps the original's ``dont_filter``; its
priority is raised by REDIRECT_PRIORITY_ADJUST so a half-done chain finishes first.
Like every request, it is checked against ``allowed_domains`` when it is downloaded;
``dont_filter`` does not exempt it, and ``meta["allow_offsite"]`` is dropped when the
redirect leaves the host (it was granted for one URL, not for wherever that sends us).

- 301/302 with POST and 303 with anything but HEAD become a GET without a body (what
  browsers do); 307 and 308 keep the method and body.
- ``meta["redirect_times"]`` counts the hops, ``meta["redirect_urls"]`` lists the URLs
  left behind and ``meta["redirect_reasons"]`` their statuses.
- More than REDIRECT_MAX_TIMES hops raises ``RedirectError``. So does a redirect back to
  a URL already in the chain, unless the response set a cookie: sites commonly set a
  session cookie and send the client back where it came from, which is progress, not a
  loop (such chains still end at the limit).
- Headers that carry credentials follow Scrapy's (and the Fetch standard's) rules:
  ``Authorization`` is dropped when the origin changes (scheme, host or port, default
  ports counted: HttpAuthMiddleware adds it again if the new URL is in its domain),
  ``Cookie`` when the host changes or https goes down to http (CookiesMiddleware
  rebuilds it for the new URL), and a proxy taken from the environment is dropped with
  its ``Proxy-Authorization`` when the scheme changes, so HttpProxyMiddleware picks the
  proxy for the new scheme.
- ``Referer`` is set again as for a link found on the redirecting response, by the
  referrer policy (``skitter.http.ReferrerPolicies``: meta, that response's
  ``Referrer-Policy``, REFERRER_POLICY), as Scrapy does; with REFERER_ENABLED off it is
  dropped. ``BaseRedirectMiddleware`` holds all of this for MetaRefreshMiddleware too.
- Not redirected: ``meta["dont_redirect"]``, statuses in ``handle_httpstatus_list``
  (spider attribute or meta), ``meta["handle_httpstatus_all"]``, a missing or
  non-HTTP ``Location``.

Stats: ``downloader/redirect_count`` and ``downloader/redirect_status_count/<N>``.
"""

from __future__ import annotations

import logging
from typing import Any
from urllib.parse import urljoin, urlsplit

from w3lib.url import safe_url_string
from yarl import URL

from skitter._types import CrawlContext, StatsSink
from skitter.exceptions import NotConfigured, RedirectError
from skitter.http import ReferrerPolicies, Request, Response
from skitter.settings import DownloaderSettings

__all__ = ["BaseRedirectMiddleware", "RedirectMiddleware"]

logger = logging.getLogger("skitter.downloader.redirect")

REDIRECT_STATUSES = frozenset({301, 302, 303, 307, 308})
_ENV_PROXY_FLAG = "_scheme_proxy"  # set by HttpProxyMiddleware (Scrapy's key)
_BODY_HEADERS = (
    "Content-Type",
    "Content-Length",
    "Content-Encoding",
    "Content-Language",
    "Content-Location",
)


class BaseRedirectMiddleware:
    """What every way of sending the client elsewhere shares: the hop limit, loop
    detection, the meta keys, the headers dropped and the Referer recomputed.

    RedirectMiddleware (3xx statuses) and MetaRefreshMiddleware (``<meta
    http-equiv=refresh>`` and the ``Refresh`` header) differ only in what they read from
    the response; both call ``_redirect``.
    """

    def __init__(
        self,
        stats: StatsSink,
        max_times: int = 20,
        priority_adjust: int = 2,
        referrer: ReferrerPolicies | None = None,
    ) -> None:
        self._stats = stats
        self.max_times = max_times
        self.priority_adjust = priority_adjust
        #: REFERRER_POLICY and friends; None when REFERER_ENABLED is off (Referer dropped).
        self._referrer = referrer
        #: The crawler that built it (Scrapy's attribute): its spider is the one whose
        #: ``handle_httpstatus_list`` counts when ``process_response`` gets none.
        self.crawler: CrawlContext | None = None

    @staticmethod
    def _base_args(crawler: CrawlContext) -> tuple[StatsSink, int, int, ReferrerPolicies | None]:
        settings = crawler.settings.view(DownloaderSettings)
        return (
            crawler.stats,
            settings.redirect_max_times,
            settings.redirect_priority_adjust,
            ReferrerPolicies.from_settings(crawler.settings),
        )

    def _redirect(
        self,
        request: Request,
        response: Response,
        target: str,
        reason: int | str,
        to_get: bool,
    ) -> Request:
        """The request for ``target`` in place of ``request``, or RedirectError when
        the chain is too long or loops."""
        meta = request.meta
        chain: list[str] = [*meta.get("redirect_urls", ()), request.url]
        times = meta.get("redirect_times", 0) + 1
        if times > self.max_times:
            raise RedirectError(
                f"{request!r}: more than {self.max_times} redirects: "
                + " -> ".join([*chain, target]),
                request=request,
            )
        if target in chain and not response.header_list("Set-Cookie"):
            raise RedirectError(
                f"{request!r}: redirect loop: " + " -> ".join([*chain, target]),
                request=request,
            )
        changes: dict[str, Any] = {
            "url": target,
            "priority": request.priority + self.priority_adjust,
        }
        if to_get:
            changes["method"] = "GET"
            changes["body"] = b""
        redirected = request.replace(**changes)
        new_meta = redirected.meta
        new_meta["redirect_times"] = times
        new_meta["redirect_urls"] = chain
        new_meta["redirect_reasons"] = [*meta.get("redirect_reasons", ()), reason]
        source, destination = _origin(request.url), _origin(target)
        if source is None or destination is None or source[1] != destination[1]:
            new_meta.pop("allow_offsite", None)
        if redirected.has_headers:
            _strip_headers(redirected, source, destination, to_get)
            redirected.headers.pop("Referer", None)
        if self._referrer is not None:
            # As a link found on the page that sent us on (Scrapy's handle_referer).
            referrer = self._referrer.referrer(response, redirected)
            if referrer is not None:
                redirected.headers["Referer"] = referrer
        old_scheme = request.url.partition(":")[0].lower()
        if old_scheme != target.partition(":")[0].lower() and new_meta.pop(_ENV_PROXY_FLAG, None):
            new_meta.pop("proxy", None)
            if redirected.has_headers:
                redirected.headers.pop("Proxy-Authorization", None)
        self._stats.inc("downloader/redirect_count")
        if isinstance(reason, int):
            self._stats.inc(f"downloader/redirect_status_count/{reason}")
        logger.debug("redirecting (%s) %r to %s", reason, request, target)
        return redirected


class RedirectMiddleware(BaseRedirectMiddleware):
    """Follows HTTP redirects by handing back a new Request."""

    @classmethod
    def from_crawler(cls, crawler: CrawlContext) -> RedirectMiddleware:
        if not crawler.settings.view(DownloaderSettings).redirect_enabled:
            raise NotConfigured
        middleware = cls(*cls._base_args(crawler))
        middleware.crawler = crawler
        return middleware

    def process_response(
        self, request: Request, response: Response, spider: Any = None
    ) -> Response | Request:
        status = response.status
        if status not in REDIRECT_STATUSES:
            return response
        meta = request.meta
        if spider is None and self.crawler is not None:
            spider = self.crawler.spider
        if (
            meta.get("dont_redirect")
            or meta.get("handle_httpstatus_all")
            or status in meta.get("handle_httpstatus_list", ())
            or status in getattr(spider, "handle_httpstatus_list", ())
        ):
            return response
        location = response.header("Location")
        if not location:
            return response
        target = _redirect_target(request.url, location.strip())
        if urlsplit(target).scheme not in ("http", "https"):
            logger.debug("%r: not following redirect to %r", request, target)
            return response
        to_get = (status == 303 and request.method not in ("GET", "HEAD")) or (
            status in (301, 302) and request.method == "POST"
        )
        return self._redirect(request, response, target, status, to_get)


Origin = tuple[str, str | None, int | None]


def _redirect_target(url: str, location: str) -> str:
    """``location`` resolved against ``url`` as browsers do (Scrapy too): three or more
    leading slashes are a host, as two are, under http(s) (the WHATWG URL parser's rule
    for special schemes), and a ``Location`` without a fragment keeps the one of ``url``
    (RFC 9110, 10.2.2). Bytes that are not UTF-8 (a Latin-1 ``Location``, as old servers
    send) are percent-encoded as they came."""
    try:
        location.encode()
    except UnicodeEncodeError:  # undecodable bytes, kept as surrogates by the header
        raw = location.encode("utf-8", "surrogateescape")
        location = "".join(chr(byte) if byte < 0x80 else f"%{byte:02X}" for byte in raw)
    if location.startswith("///") and url.partition(":")[0].lower() in ("http", "https"):
        location = "//" + location.lstrip("/")
    target = safe_url_string(urljoin(url, location))
    fragment = urlsplit(url).fragment
    if fragment and "#" not in location:
        target = f"{target}#{fragment}"
    return target


def _origin(url: str) -> Origin | None:
    """Scheme, host and port (the scheme's default when none is written) as the
    transport reads them (yarl); None when the URL cannot be read, which never counts
    as the same origin or host."""
    try:
        parsed = URL(url)
    except ValueError:
        return None
    return parsed.scheme, parsed.raw_host, parsed.port


def _strip_headers(
    redirected: Request, source: Origin | None, target: Origin | None, to_get: bool
) -> None:
    headers = redirected.headers
    if to_get:
        for name in _BODY_HEADERS:
            headers.pop(name, None)
    if source is None or target is None or source != target:
        headers.pop("Authorization", None)
    if (
        source is None
        or target is None
        or source[1] != target[1]
        or target[0] not in (source[0], "https")
    ):
        headers.pop("Cookie", None)
