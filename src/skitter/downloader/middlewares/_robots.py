"""RobotsTxtMiddleware: obey robots.txt (ROBOTSTXT_OBEY), read by the ROBOTSTXT_PARSER
class (Protego's by default; Scrapy's interface: ``from_crawler(crawler, body)``,
``allowed(url, user_agent)``, and ``crawl_delay(user_agent)`` when it has one).

robots.txt is fetched once per origin (scheme + host + port), the first time a request
for it comes through; requests for the same origin that arrive meanwhile wait for that
one download instead of starting their own. The parsed rules are kept for the crawl.

The fetch goes through the part of the onion *inside* this middleware (see
``bind_transport``), so it carries the crawl's User-Agent and default headers, uses the
request's proxy, and follows redirects (``http://`` → ``https://`` is common), up to
five hops, but never out of ``allowed_domains``: a robots.txt that redirects offsite
is not followed, and its host counts as having none (allow all, as for a 404; the log
says why). robots.txt of an offsite host is never asked for: OffsiteMiddleware refuses
the request before it gets here, and the Downloader's guard refuses robots.txt's own
requests (a request exempted by ``meta["allow_offsite"]`` passes the exemption on to
its robots.txt, same origin). What the answer means, as in Scrapy:

- 2xx: the rules apply (matched against ROBOTSTXT_USER_AGENT, else the User-Agent);
- 4xx: there are no rules, everything is allowed;
- 5xx, a network error or an unreadable file: everything is allowed, with a warning.

In a distributed crawl the crawler injects a ``RobotsCache`` (the cluster's, in Redis):
robots.txt is then fetched once per origin for the whole cluster. The first worker to
ask claims it and fetches it; the others wait for its text in the cache (or fetch it
themselves once the claim lapses, if that worker died). A definitive answer (2xx, 4xx)
is kept ``ROBOTS_TTL`` seconds, a failure (5xx, network error) ``ROBOTS_FAILURE_TTL``.

A disallowed request raises ``IgnoreRequest``. ``meta["dont_obey_robotstxt"]`` skips the
check. ``crawl_delay(host)`` gives the Crawl-delay the rules ask of us, for the slots.

Stats: ``robotstxt/request_count``, ``robotstxt/response_count``,
``robotstxt/response_status_count/<N>``, ``robotstxt/exception_count/<Error>``,
``robotstxt/forbidden``, ``robotstxt/offsite_redirect``, ``robotstxt/shared`` (read from
the cluster's cache instead of fetched).
"""

from __future__ import annotations

import asyncio
import functools
import logging
from collections.abc import Callable
from typing import Any, Literal, Protocol

from skitter._components import load_object
from skitter._types import CrawlContext, StatsSink
from skitter.downloader._middleware import DownloadHandler
from skitter.exceptions import (
    ConfigError,
    CrawlControl,
    IgnoreRequest,
    NotConfigured,
    RequestError,
)
from skitter.http import Request, Response, Scope, url_host
from skitter.http.wiring import MARK
from skitter.robotstxt import ProtegoRobotParser, RerpRobotParser
from skitter.settings import DownloaderSettings

__all__ = ["RobotsCache", "RobotsTxtMiddleware"]

logger = logging.getLogger("skitter.downloader.robotstxt")
_NO_ROBOTS = frozenset({"data:", "file:"})

_MAX_HOPS = 5
_RETRY = object()  # the fetch was cancelled: a waiter should try again itself
_Rules = Any  # a ROBOTSTXT_PARSER instance, or None: everything is allowed
#: How long a shared robots.txt is kept (a day, as Google does), and a failure to get one.
ROBOTS_TTL = 86_400.0
ROBOTS_FAILURE_TTL = 60.0
#: How often a worker looks again while another one fetches robots.txt.
_POLL = 0.1


class RobotsCache(Protocol):
    """robots.txt shared with other processes (``cluster.RedisRobotsCache``). Neither
    method raises for the store being out of reach: ``claim`` then answers "mine"."""

    async def claim(self, origin: str) -> tuple[Literal["cached", "mine", "busy"], str | None]:
        """("cached", text; None: no rules), ("mine", None): fetch it and ``put`` it,
        or ("busy", None): another process is fetching it, ask again soon."""
        ...

    async def put(self, origin: str, text: str | None, ttl: float) -> None: ...


class RobotsTxtMiddleware:
    """Drops requests that the site's robots.txt disallows for our user agent."""

    def __init__(
        self,
        stats: StatsSink,
        user_agent: str,
        scope: Scope | None = None,
        cache: RobotsCache | None = None,
        parser: Callable[[bytes], Any] | None = None,
    ) -> None:
        self._stats = stats
        self._cache = cache
        self.user_agent = user_agent
        self._scope = scope if scope is not None else Scope()
        self._fetch: DownloadHandler | None = None
        self._rules: dict[str, asyncio.Future[Any]] = {}
        self._delays: dict[str, float | None] = {}
        #: Builds the rules from robots.txt's body (ROBOTSTXT_PARSER's ``from_crawler``).
        self._parser = parser if parser is not None else _protego

    @classmethod
    def from_crawler(cls, crawler: CrawlContext) -> RobotsTxtMiddleware:
        settings = crawler.settings.view(DownloaderSettings)
        if not settings.robotstxt_obey:
            raise NotConfigured
        user_agent = (
            settings.robotstxt_user_agent
            or getattr(crawler.spider, "user_agent", None)
            or settings.user_agent
        )
        cache: RobotsCache | None = getattr(crawler, "robots_cache", None)  # a worker's
        parser = robots_parser(settings.robotstxt_parser)
        return cls(
            crawler.stats,
            user_agent,
            Scope.of(crawler.spider),
            cache,
            functools.partial(parser.from_crawler, crawler),
        )

    def bind_transport(self, fetch: DownloadHandler) -> None:
        """Called by the Downloader with the handler to download robots.txt through."""
        self._fetch = fetch

    def crawl_delay(self, host: str) -> float | None:
        """The Crawl-delay robots.txt of ``host`` asks of us, once it has been read."""
        return self._delays.get(host.lower())

    async def process_request(self, request: Request, spider: Any = None) -> None:
        if request.meta.get("dont_obey_robotstxt") or request.url[:5].lower() in _NO_ROBOTS:
            return  # data: and file: have no server to ask (Scrapy skips them too)
        origin = _origin(request.url)
        future = self._rules.get(origin)
        if future is not None and future.done() and future.result() is not _RETRY:
            rules = future.result()
        else:
            rules = await self._rules_for(origin, request)
        if rules is not None and not rules.allowed(request.url, self.user_agent):
            self._stats.inc("robotstxt/forbidden")
            raise IgnoreRequest(f"forbidden by robots.txt: {request!r}", request=request)

    async def _rules_for(self, origin: str, request: Request) -> _Rules:
        while True:
            future = self._rules.get(origin)
            if future is None:
                break
            rules = await future
            if rules is not _RETRY:
                return rules
        future = self._rules[origin] = asyncio.get_running_loop().create_future()
        try:
            rules = await self._shared(origin, request)
        except BaseException:
            # Cancelled: let the next waiter fetch it; never leave them hanging.
            del self._rules[origin]
            future.set_result(_RETRY)
            raise
        future.set_result(rules)
        host = url_host(origin)
        delay = getattr(rules, "crawl_delay", None)  # not part of Scrapy's interface
        self._delays[host] = delay(self.user_agent) if delay is not None else None
        return rules

    async def _shared(self, origin: str, request: Request) -> _Rules:
        """The rules, from the cluster's cache when there is one (fetched by one worker)."""
        cache = self._cache
        if cache is None:
            return self._rules_of(origin, (await self._download(origin, request))[0])
        while True:
            state, text = await cache.claim(origin)
            if state == "cached":
                self._stats.inc("robotstxt/shared")
                return self._rules_of(origin, text)
            if state == "mine":
                text, definitive = await self._download(origin, request)
                await cache.put(origin, text, ROBOTS_TTL if definitive else ROBOTS_FAILURE_TTL)
                return self._rules_of(origin, text)
            await asyncio.sleep(_POLL)

    def _rules_of(self, origin: str, text: str | None) -> _Rules:
        if text is None:
            return None
        try:
            return self._parser(text.encode("utf-8"))
        except Exception as exc:
            logger.warning("%s/robots.txt: cannot parse (%s); allowing all", origin, exc)
            return None

    async def _download(self, origin: str, request: Request) -> tuple[str | None, bool]:
        """robots.txt's text (None: no rules), and whether that is the site's answer
        (2xx, 4xx) rather than a failure to get one."""
        if self._fetch is None:
            raise RuntimeError("RobotsTxtMiddleware used before bind_transport()")
        # dont_render: a session or proxy pool sends it again through the crawl's own
        # route, where the spider's render default would otherwise apply.
        meta: dict[str, Any] = {
            "dont_obey_robotstxt": True,
            "dont_retry": True,
            "dont_render": True,
        }
        # allow_offsite: the same origin; MARK: a stored request's proxy credentials,
        # which the Downloader puts back (``_proxyauth``) for robots.txt too.
        for key in ("proxy", MARK, "allow_offsite"):
            if request.meta.get(key) is not None:
                meta[key] = request.meta[key]
        robots: Request = Request(f"{origin}/robots.txt", meta=meta, dont_filter=True)
        stats = self._stats
        stats.inc("robotstxt/request_count")
        try:
            for _ in range(_MAX_HOPS + 1):
                result = await self._fetch(robots)
                if isinstance(result, Response):
                    break
                if not self._scope.admits(result):
                    stats.inc("robotstxt/offsite_redirect")
                    logger.warning(
                        "robots.txt of %s redirects to %s, outside allowed_domains; "
                        "treating as no robots.txt",
                        origin,
                        result.url,
                    )
                    return None, True
                robots = result
            else:
                logger.warning("%s/robots.txt: too many redirects; allowing all", origin)
                return None, True
        except (RequestError, CrawlControl) as exc:
            stats.inc(f"robotstxt/exception_count/{type(exc).__name__}")
            logger.warning("%s/robots.txt: cannot download (%s); allowing all", origin, exc)
            return None, False
        return self._text(origin, result)

    def _text(self, origin: str, response: Response) -> tuple[str | None, bool]:
        status = response.status
        self._stats.inc("robotstxt/response_count")
        self._stats.inc(f"robotstxt/response_status_count/{status}")
        if status >= 500:
            logger.warning("%s/robots.txt: HTTP %d; allowing all", origin, status)
            return None, False
        if status >= 300:
            return None, True  # 4xx (and unfollowed 3xx): no rules
        return response.body.decode("utf-8", errors="replace"), True


def _origin(url: str) -> str:
    """``scheme://host[:port]`` of an absolute URL, lower-cased, without parsing it all."""
    start = url.find("://")
    if start < 0:
        return url.lower()
    end = len(url)
    for ch in "/?#":
        i = url.find(ch, start + 3)
        if 0 <= i < end:
            end = i
    return url[:end].lower()


def _protego(body: bytes) -> Any:
    """The default parser, for a middleware built without a crawler."""
    return ProtegoRobotParser(body)


def robots_parser(spec: object) -> Any:
    """ROBOTSTXT_PARSER as a class with Scrapy's parser interface; refused at start
    when it lacks ``from_crawler`` or ``allowed``, or cannot parse at all (Rerp's
    package missing), rather than failing on the first robots.txt."""
    if isinstance(spec, str) and spec.startswith("scrapy.robotstxt."):
        spec = "skitter.robotstxt." + spec.rpartition(".")[2]
    parser = load_object(spec)
    for method in ("from_crawler", "allowed"):
        if not callable(getattr(parser, method, None)):
            raise ConfigError(
                f"ROBOTSTXT_PARSER {spec!r} has no {method}(): a robots.txt parser takes "
                "from_crawler(crawler, robotstxt_body) and allowed(url, user_agent)"
            )
    if parser is RerpRobotParser:
        try:
            parser(b"")
        except ImportError as exc:
            raise ConfigError(f"ROBOTSTXT_PARSER {spec!r}: {exc}") from None
    return parser
