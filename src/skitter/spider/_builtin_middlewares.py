"""The built-in spider middlewares, with Scrapy's names, settings and stats keys.

=====================  =====  ==================================================
middleware             order  job
=====================  =====  ==================================================
HttpErrorMiddleware       50  keep non-2xx responses from callbacks
OffsiteMiddleware        500  drop requests outside ``spider.allowed_domains``
RefererMiddleware        700  send the page a link was found on as ``Referer``
UrlLengthMiddleware      800  drop requests with URLs over URLLENGTH_LIMIT
DepthMiddleware          900  track ``meta["depth"]``, apply DEPTH_LIMIT/PRIORITY
=====================  =====  ==================================================

Every page's links pass the last four, so they are ``RequestFilter``s: the manager runs
them in one pass over the callback's output, one cheap check per request.
"""

from __future__ import annotations

import logging
from collections.abc import AsyncIterable, AsyncIterator, Iterable
from typing import Any

from skitter._types import CrawlContext, StatsSink
from skitter.exceptions import HttpError, NotConfigured
from skitter.http import ReferrerPolicies, ReferrerPolicy, Request, Response, Scope, url_host
from skitter.settings import Settings, SpiderSettings
from skitter.spider._middleware import RequestCheck, RequestFilter

__all__ = [
    "DepthMiddleware",
    "HttpErrorMiddleware",
    "OffsiteMiddleware",
    "RefererMiddleware",
    "UrlLengthMiddleware",
]

log = logging.getLogger("skitter.spider.middlewares")


class HttpErrorMiddleware:
    """Non-2xx responses reach a callback only when the spider says it handles them.

    Allowed, in Scrapy's precedence: ``meta["handle_httpstatus_all"]``; else
    ``meta["handle_httpstatus_list"]`` (alone, when present); else HTTPERROR_ALLOW_ALL;
    else ``spider.handle_httpstatus_list`` together with HTTPERROR_ALLOWED_CODES.
    Others raise ``HttpError`` from ``process_spider_input`` and are counted here, where
    they are refused. The engine hands that error to the request's errback (if any) and
    never reports it as a spider error, so, unlike Scrapy's, this middleware needs no
    ``process_spider_exception`` to absorb it: without one, the default chain has no
    exception hook and ``process_output`` needs no guards, a quarter of its cost.
    """

    def __init__(
        self, stats: StatsSink, *, allowed_codes: Iterable[int] = (), allow_all: bool = False
    ) -> None:
        self._stats = stats
        self._allowed = frozenset(int(code) for code in allowed_codes)
        self._allow_all = allow_all
        #: The crawl (Scrapy's attribute), whose spider is asked when none is passed.
        self.crawler: CrawlContext | None = None

    @classmethod
    def from_crawler(cls, crawler: CrawlContext) -> HttpErrorMiddleware:
        own = crawler.settings.view(SpiderSettings)
        mw = cls(
            crawler.stats,
            allowed_codes=own.httperror_allowed_codes,
            allow_all=own.httperror_allow_all,
        )
        mw.crawler = crawler
        return mw

    def process_spider_input(self, response: Response, spider: Any = None) -> None:
        status = response.status
        if 200 <= status < 300:
            return
        meta = response.meta
        if meta.get("handle_httpstatus_all"):
            return
        listed = meta.get("handle_httpstatus_list")
        if listed is not None:
            allowed = status in listed
        else:
            allowed = (
                self._allow_all
                or status in self._allowed
                or status in getattr(spider or self._crawl_spider(), "handle_httpstatus_list", ())
            )
        if allowed:
            return
        self._stats.inc("httperror/response_ignored_count")
        self._stats.inc(f"httperror/response_ignored_status_count/{status}")
        raise HttpError("Ignoring non-200 response", response=response)

    def _crawl_spider(self) -> Any:
        """The crawl's spider, for a caller that passes none (Scrapy 2.13's signature)."""
        return None if self.crawler is None else self.crawler.spider


class OffsiteMiddleware(RequestFilter):
    """Drops links outside ``spider.allowed_domains`` early, before they are queued.

    The rules are the crawl's ``Scope`` (skitter.http): hosts and their subdomains on
    every port, ``host:port`` entries on that port only, IP literals exactly; an empty
    ``allowed_domains`` allows every host. Only ``meta["allow_offsite"]`` lets a link
    through (``dont_filter`` does not). This is an early filter, not the boundary: the
    downloader checks every request again (redirects and start URLs never pass here).
    A start URL outside the scope gets a WARNING, once per host, when it is queued: it
    is refused when downloaded, which is almost always a mistake in the spider.
    Counts ``offsite/filtered`` per link and ``offsite/domains`` per new host.
    """

    def __init__(self, stats: StatsSink) -> None:
        self._stats = stats
        self._spider: Any = None
        self._scope = Scope()
        self._seen: set[str] = set()
        self._warned: set[str] = set()

    @classmethod
    def from_crawler(cls, crawler: CrawlContext) -> OffsiteMiddleware:
        return cls(crawler.stats)

    def _learn(self, spider: Any) -> Scope:
        if spider is not self._spider:
            self._spider = spider
            self._scope = Scope.of(spider)
        return self._scope

    def allows(self, request: Request) -> bool:
        # A URL yarl cannot read (None) is let through, to fail as InvalidURL later.
        return self._scope.allows_url(request.url) is not False or bool(
            request.meta.get("allow_offsite")
        )

    def request_filter(self, response: Response, spider: Any) -> RequestCheck | None:
        if not self._learn(spider).restricted:
            return None
        return self._check

    def _check(self, request: Request) -> Request | None:
        if self.allows(request):
            return request
        host = url_host(request.url)  # cheap: a page may link a thousand offsite pages
        if host not in self._seen:
            self._seen.add(host)
            self._stats.inc("offsite/domains")
            log.debug("Filtered offsite request to %r: %s", Scope.describe(request.url), request)
        self._stats.inc("offsite/filtered")
        return None

    async def process_start_requests(
        self, start_requests: AsyncIterable[Any], spider: Any
    ) -> AsyncIterator[Any]:
        scope = self._learn(spider)
        async for request in start_requests:
            if scope.restricted and isinstance(request, Request) and not self.allows(request):
                host = Scope.describe(request.url)
                if host not in self._warned:
                    self._warned.add(host)
                    log.warning(
                        "Start URL %s is outside allowed_domains %s: it will be refused "
                        "(offsite). Add %r to allowed_domains, or set meta['allow_offsite']",
                        request.url,
                        [str(entry) for entry in scope.entries],
                        host,
                    )
            yield request


class RefererMiddleware(RequestFilter):
    """Sets ``Referer`` on followed links by the crawl's referrer policy.

    The policy (``skitter.http.ReferrerPolicies``): ``meta["referrer_policy"]`` of the
    link, else the page's ``Referrer-Policy`` header, else REFERRER_POLICY (Scrapy's
    default, no-referrer-when-downgrade without ``file:``/``s3:`` pages). A Referer the
    request already has is kept. REFERER_ENABLED=False switches it off.
    """

    def __init__(self, policies: ReferrerPolicies | Settings | None = None) -> None:
        if not isinstance(policies, ReferrerPolicies):
            # Scrapy's constructor takes the settings (or none: the defaults).
            settings = Settings() if policies is None else policies
            own = settings.view(SpiderSettings)
            policies = ReferrerPolicies(own.referrer_policy, own.referrer_policies)
        self.policies = policies

    @property
    def default_policy(self) -> type[ReferrerPolicy]:
        """The class of REFERRER_POLICY's policy (Scrapy's attribute)."""
        return type(self.policies.default)

    def policy(self, response: Response, request: Request) -> ReferrerPolicy:
        """The policy that decides ``request``'s Referer when found on ``response``."""
        return self.policies.for_request(request, self.policies.for_response(response))

    @classmethod
    def from_crawler(cls, crawler: CrawlContext) -> RefererMiddleware:
        policies = ReferrerPolicies.from_settings(crawler.settings)
        if policies is None:
            raise NotConfigured
        return cls(policies)

    def request_filter(self, response: Response, spider: Any) -> RequestCheck | None:
        policies = self.policies
        page = policies.for_response(response)
        url = response.url
        referrer_for_page = page.bind(url)

        def check(request: Request) -> Request:
            if request.meta.get("referrer_policy") is None:
                referrer = referrer_for_page(request.url)
            else:
                referrer = policies.for_request(request, page).referrer(url, request.url)
            if referrer is not None:
                request.setdefault_referer(referrer)
            return request

        return check


class UrlLengthMiddleware(RequestFilter):
    """Drops requests whose URL is longer than URLLENGTH_LIMIT (0 switches it off);
    counts ``urllength/request_ignored_count``."""

    def __init__(self, stats: StatsSink, limit: int) -> None:
        self._stats = stats
        self.limit = limit

    @classmethod
    def from_crawler(cls, crawler: CrawlContext) -> UrlLengthMiddleware:
        limit = crawler.settings.view(SpiderSettings).urllength_limit
        if not limit:
            raise NotConfigured
        return cls(crawler.stats, limit)

    def request_filter(self, response: Response, spider: Any) -> RequestCheck | None:
        return self._check

    def _check(self, request: Request) -> Request | None:
        if len(request.url) <= self.limit:
            return request
        log.info("Ignoring link (URL longer than %d): %.200s", self.limit, request.url)
        self._stats.inc("urllength/request_ignored_count")
        return None


def _start_request(request: Request) -> Request:
    """A request that no page led to (a start request): kept as it is, its
    ``depth_reset`` consumed."""
    if request.meta:
        request.meta.pop("depth_reset", None)
    return request


class DepthMiddleware(RequestFilter):
    """Keeps ``meta["depth"]``: 0 for start requests, one more than the page for each
    link found on it, 0 again for a request with ``meta["depth_reset"]`` (Scrapy 2.18's:
    a crawl that moves to another site starts counting afresh; the key is consumed, so
    it does not spread through copied meta).

    Links deeper than DEPTH_LIMIT (0 = no limit) are dropped and counted in
    ``depth/request_ignored_count``. As in Scrapy, ``priority -= depth * DEPTH_PRIORITY``:
    a positive DEPTH_PRIORITY crawls breadth-first, a negative one depth-first.
    ``request_depth_max`` records the deepest request kept; with DEPTH_STATS_VERBOSE,
    ``request_depth_count/<depth>`` counts the requests kept at each depth (and the
    pages that start a crawl at depth 0).
    """

    def __init__(
        self, stats: StatsSink, *, limit: int = 0, priority: int = 0, verbose: bool = False
    ) -> None:
        self._stats = stats
        self.limit = limit
        self.priority = priority
        self.verbose = verbose

    @classmethod
    def from_crawler(cls, crawler: CrawlContext) -> DepthMiddleware:
        own = crawler.settings.view(SpiderSettings)
        return cls(
            crawler.stats,
            limit=own.depth_limit,
            priority=own.depth_priority,
            verbose=own.depth_stats_verbose,
        )

    def request_filter(self, response: Response | None, spider: Any) -> RequestCheck | None:
        if response is None:
            return _start_request  # no page to be deeper than
        meta = response.meta
        depth = meta.get("depth")
        if depth is None:
            depth = meta["depth"] = 0
            if self.verbose:
                self._stats.inc("request_depth_count/0")
        depth += 1
        too_deep = bool(self.limit) and depth > self.limit
        counted = False

        def check(request: Request) -> Request | None:
            nonlocal counted
            if request.meta.pop("depth_reset", False):
                return self._place(request, 0)
            if too_deep:
                self._too_deep(request)
                return None
            if counted and not self.verbose:
                request.meta["depth"] = depth
                if self.priority:
                    request.priority -= depth * self.priority
                return request
            counted = True
            return self._place(request, depth)

        return check

    def _place(self, request: Request, depth: int) -> Request:
        """``request`` at ``depth``: its meta, priority and the depth stats."""
        request.meta["depth"] = depth
        if self.priority:
            request.priority -= depth * self.priority
        stats = self._stats
        stats.max("request_depth_max", depth)
        if self.verbose:
            stats.inc(f"request_depth_count/{depth}")
        return request

    def _too_deep(self, request: Request) -> None:
        log.debug("Ignoring link (depth > %d): %s", self.limit, request)
        self._stats.inc("depth/request_ignored_count")
