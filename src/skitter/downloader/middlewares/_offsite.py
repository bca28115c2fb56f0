"""Keeping downloads inside ``allowed_domains``: OffsiteMiddleware and the guard.

A request can reach the downloader without passing the spider's link filter: a
redirect (``Location: //other-host/`` included), a request a downloader middleware
returns or sends down, robots.txt and its redirects, start URLs, ``@every`` requests,
URLs pushed to workers. So scope is checked where each request is about to be
downloaded, twice, with the crawl's one ``Scope``:

- ``OffsiteMiddleware`` (order 50, Scrapy 2.11+'s name and place), outermost, so an
  offsite request is refused before anything else runs: its robots.txt is never
  fetched, no cookie or header is computed for it;
- the Downloader's guard, at the centre of the onion right before the transport (HTTP
  and browser), which no setting switches off. It catches requests made inside the
  onion: robots.txt's own requests and redirect hops, requests a middleware sends down.

``data:`` and ``file:`` requests are refused by the same guard unless the spider's
``allowed_schemes`` lists their scheme (``http.Scope``), also without ``allowed_domains``:
the Downloader sends them to ``_local`` through a guard of its own then.

Only ``meta["allow_offsite"]`` exempts a request (and a redirect to another host drops
it: the exemption was granted for one URL); ``dont_filter`` does not, unlike Scrapy,
where it is a second, easily inherited exemption. An empty ``allowed_domains`` checks
nothing. A refused request raises ``IgnoreRequest`` ("offsite: ..."), which the engine
records as a BAD task with that reason; ``offsite/filtered`` counts them and
``offsite/domains`` the hosts, the first refusal per host is logged.
"""

from __future__ import annotations

import logging
from typing import Any, NoReturn

from skitter._types import CrawlContext, StatsSink
from skitter.exceptions import IgnoreRequest
from skitter.http import Request, Scope
from skitter.http.wiring import LOCAL_SCHEMES

__all__ = ["OffsiteGuard", "OffsiteMiddleware"]

log = logging.getLogger("skitter.downloader.offsite")


class OffsiteGuard:
    """Refuses a request outside ``scope``; shared by the middleware and the centre."""

    __slots__ = ("_seen", "_stats", "scope")

    def __init__(self, scope: Scope, stats: StatsSink) -> None:
        self.scope = scope
        self._stats = stats
        self._seen: set[str] = set()

    def hosts_seen(self) -> set[str]:
        """The hosts refused so far (a copy; scheme refusals are left out)."""
        return {seen for seen in self._seen if not seen.endswith(":")}

    def check(self, request: Request) -> None:
        """Return if ``request`` may be downloaded; raise IgnoreRequest if it is offsite
        (InvalidURL if its URL cannot be parsed)."""
        if not self.scope.admits(request):
            scheme = request.parsed_url.scheme
            if scheme in LOCAL_SCHEMES:
                self._refuse_scheme(request, scheme)
            self.refuse(request, request.url)

    def _refuse_scheme(self, request: Request, scheme: str) -> NoReturn:
        if f"{scheme}:" not in self._seen:
            self._seen.add(f"{scheme}:")
            log.info("Refused %s: request (not in allowed_schemes): %s", scheme, request)
        self._stats.inc("offsite/filtered")
        raise IgnoreRequest(
            f"offsite: {scheme}: URLs are refused unless the spider's allowed_schemes "
            f"lists {scheme!r} (or the request sets meta['allow_offsite'])",
            request=request,
        )

    def refuse(self, request: Request, url: str, why: str = "") -> NoReturn:
        """Count and log the refusal of ``request`` because of ``url`` (its own, or one
        the browser was sent to), and raise IgnoreRequest."""
        host = Scope.describe(url)
        if host not in self._seen:
            self._seen.add(host)
            self._stats.inc("offsite/domains")
            log.info("Refused offsite request to %r (outside allowed_domains): %s", host, request)
        self._stats.inc("offsite/filtered")
        reason = f"offsite: {host} is outside allowed_domains"
        raise IgnoreRequest(f"{reason} ({why})" if why else reason, request=request)


class OffsiteMiddleware:
    """Refuses requests outside ``spider.allowed_domains`` before they are downloaded
    (Scrapy's ``scrapy.downloadermiddlewares.offsite.OffsiteMiddleware``). With
    ``allowed_domains`` empty it checks nothing (the Downloader's guard still judges
    ``data:`` and ``file:`` requests)."""

    def __init__(self, guard: OffsiteGuard) -> None:
        self.guard = guard
        self._spider: Any = None

    @property
    def domains_seen(self) -> set[str]:
        """The hosts refused so far (Scrapy's attribute): each is logged and counted in
        ``offsite/domains`` once."""
        return self.guard.hosts_seen()

    def should_follow(self, request: Request, spider: Any) -> bool:
        """Scrapy's hook for subclasses: whether ``request`` may be downloaded. The
        default is the crawl's scope (``allowed_domains``, ``meta["allow_offsite"]``)."""
        return self.guard.scope.admits(request)

    @classmethod
    def from_crawler(cls, crawler: CrawlContext) -> OffsiteMiddleware:
        # Built without allowed_domains too (it then lets every http(s) request through),
        # as Scrapy's is: spider_opened may bring domains the spider set later.
        return cls(OffsiteGuard(Scope.of(crawler.spider), crawler.stats))

    def spider_opened(self, spider: Any) -> None:
        """Scrapy's hook: read the spider's ``allowed_domains`` again (a spider may set
        them in ``__init__``, after this middleware was built)."""
        self.guard.scope = Scope.of(spider)
        self._spider = spider

    def process_request(self, request: Request, spider: Any = None) -> None:
        if not self.guard.scope.restricted:
            return  # nothing to check here; data: / file: meet the Downloader's own guard
        if type(self).should_follow is OffsiteMiddleware.should_follow:
            self.guard.check(request)
        elif not self.should_follow(request, spider or self._spider):
            self.guard.refuse(request, request.url, "should_follow")

    def request_scheduled(self, request: Request, spider: Any = None) -> None:
        """Scrapy's signal handler of the same check, for code that calls it directly."""
        self.guard.check(request)
