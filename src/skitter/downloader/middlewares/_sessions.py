"""SessionMiddleware: requests go out as one of a few visitors, and a blocked one is
replaced by a fresh one (SESSION_POOL_SIZE > 0).

Order 650: inside RetryMiddleware and RedirectMiddleware, outside CookiesMiddleware and
the proxies. Each request takes a session of its scope (its download slot: its host, or
``meta["download_slot"]``; or the project, per SESSION_POOL_SCOPE) from the
``SessionPool`` and is stamped with it:
``meta["session_id"]`` (what the spider sees, and a request may set to stay in a
session), ``meta["cookiejar"]`` (the session's jar in CookiesMiddleware),
``meta["impersonate"]`` (its SESSION_FINGERPRINTS profile, for a transport that
impersonates browsers) and the proxy pool's index of its proxy. A request that sets
``meta["cookiejar"]``, ``meta["impersonate"]`` or ``meta["proxy"]`` itself keeps its own.
A new session learns its proxy (and its cookies) from its first response: requests it
sends before that one is back may go through another proxy of the pool.

When the response is a block (``_blocks``: BLOCK_STATUSES with BLOCK_MARKERS, a CAPTCHA
page, the spider's ``is_blocked``), the session is retired, its cookies forgotten, and
the request goes again at once on a fresh session, inside this one download: the
block is the session's failure, not the request's, so it counts neither as a retry of
the task nor for the slot's breaker or AutoThrottle (they hear of the download once,
with the status of the last attempt). DOWNLOAD_DELAY is waited between the attempts,
so a site is not hit faster than the crawl's delay. After SESSION_MAX_BLOCK_RETRIES
fresh sessions are blocked too, the task fails with ``Blocked``: a site that blocks
everything is seen, not retried for ever.

Stats: ``sessions/created``, ``sessions/retired/blocked``, ``sessions/retired/max_uses``,
``sessions/block_retries`` and ``sessions/gave_up``. With a job directory the live
sessions are kept in its checkpoint, and their jars by CookieJarFiles (COOKIES_PERSIST).
In a Redis job (``skitter worker``) the crawler gives a ``SessionStore``
(``crawler.session_store``) and the pool is the job's, shared by every worker
(``_sessionshare``): sessions, uses, retirements and jars.
"""

from __future__ import annotations

import asyncio
import logging
from typing import Any

from skitter._clock import Clock
from skitter._types import CrawlContext, StatsSink
from skitter.downloader._middleware import DownloadHandler, DownloadResult
from skitter.downloader.middlewares._blocks import BlockDetector
from skitter.downloader.middlewares._cookies import CookiesMiddleware
from skitter.downloader.middlewares._proxypool import POOL_KEY
from skitter.downloader.middlewares._sessionpool import Session, SessionPool, check_scope, jar_key
from skitter.downloader.middlewares._sessionshare import SessionStore, SharedSessions
from skitter.exceptions import Blocked, ConfigError, NotConfigured
from skitter.http import Request, Response, url_host
from skitter.settings import DownloaderSettings, SessionSettings, Settings

__all__ = ["SessionMiddleware"]

logger = logging.getLogger("skitter.downloader.sessions")

#: meta key: which of the keys below this middleware set (the others are the spider's).
_OURS = "_session_keys"


class SessionMiddleware:
    """Binds each request to a session of the pool; replaces blocked sessions."""

    def __init__(
        self,
        pool: SessionPool,
        blocks: BlockDetector,
        stats: StatsSink,
        *,
        scope: str = "slot",
        max_block_retries: int = 10,
        delay: float = 0.0,
        store: SessionStore | None = None,
        clock: Clock | None = None,
    ) -> None:
        check_scope(scope)
        if max_block_retries < 0:
            raise ConfigError(f"SESSION_MAX_BLOCK_RETRIES must be >= 0, got {max_block_retries!r}")
        self.pool = pool
        #: The job's pool, shared with the other workers (None: this crawl's own).
        self.shared = SharedSessions(store, pool, clock=clock) if store is not None else None
        self.scope = scope
        self.max_block_retries = max_block_retries
        self._blocks = blocks
        self._stats = stats
        self._delay = delay
        self._fetch: DownloadHandler | None = None
        #: CookiesMiddleware, given by the Downloader: retired sessions' jars are dropped.
        self.cookies: CookiesMiddleware | None = None

    @classmethod
    def from_crawler(cls, crawler: CrawlContext) -> SessionMiddleware:
        settings = crawler.settings
        own = settings.view(SessionSettings)
        scope = check_scope(str(own.session_pool_scope))  # a typo is refused, used or not
        size = int(own.session_pool_size)
        fingerprints = list(own.session_fingerprints or ())
        if size == 0:
            if fingerprints:
                raise ConfigError(
                    "SESSION_FINGERPRINTS is set but SESSION_POOL_SIZE is 0: profiles are "
                    "given to sessions, and there are none; set SESSION_POOL_SIZE (say 8) "
                    "or leave SESSION_FINGERPRINTS empty"
                )
            raise NotConfigured
        if fingerprints and _transport(settings) != "curl":
            logger.warning(
                "SESSION_FINGERPRINTS: meta['impersonate'] is honoured by the curl transport "
                "only (DOWNLOAD_TRANSPORT='curl', or meta['transport']='curl' per request); "
                "requests sent by another transport carry no browser fingerprint"
            )
        pool = SessionPool(size, int(own.session_max_uses), fingerprints)
        _check_profiles(pool.fingerprints)
        return cls(
            pool,
            BlockDetector.from_settings(settings, crawler.spider),
            crawler.stats,
            scope=scope,
            max_block_retries=int(own.session_max_block_retries),
            delay=float(settings.view(DownloaderSettings).download_delay or 0),
            store=getattr(crawler, "session_store", None),
            clock=crawler.clock,
        )

    def bind_inner(self, fetch: DownloadHandler) -> None:
        """Called by the Downloader with the onion inside this middleware."""
        self._fetch = fetch

    async def process_request(self, request: Request, spider: Any = None) -> DownloadResult:
        fetch = self._fetch
        assert fetch is not None, "bind_inner was not called"
        meta = request.meta
        scope = ""
        if self.scope == "slot":
            scope = meta.get("download_slot") or url_host(request.url)
        ours: list[str] = list(meta.get(_OURS) or ())
        blocks = 0
        shared = self.shared
        while True:
            session = await self._take(scope, meta.get("session_id"))
            self._stamp(meta, session, ours)
            last = shared.used(session) if shared else self.pool.used(session)
            try:
                result = await fetch(request)
            finally:
                if last:  # its jar goes once its last request is done with it
                    self._retired(session)
            proxy = meta.get(POOL_KEY)
            if POOL_KEY in ours and isinstance(proxy, int):
                session.proxy = proxy
            if not isinstance(result, Response):
                return result
            reason = await self._blocks(result)
            if reason is None:
                if shared is not None:
                    await shared.learnt(session, self.cookies)
                return result
            if shared is not None:
                first = await shared.retire(session, "blocked")
                self._retired(session, counted=first)
            elif self.pool.retire(session, "blocked"):
                self._retired(session)
            blocks += 1
            logger.debug("Session %s blocked on %r: %s", session.id, request, reason)
            if blocks > self.max_block_retries:
                self._stats.inc("sessions/gave_up")
                raise Blocked(
                    f"blocked on {blocks} sessions in a row (SESSION_MAX_BLOCK_RETRIES="
                    f"{self.max_block_retries}), last: {reason}",
                    response=result,
                )
            self._stats.inc("sessions/block_retries")
            meta.pop("session_id", None)
            if self._delay:
                await asyncio.sleep(self._delay)

    async def _take(self, scope: str, wanted: Any) -> Session:
        if self.shared is not None:
            session, new = await self.shared.take(scope, wanted, self.cookies)
        else:
            session, new = self.pool.take(scope, wanted)
        if new:
            self._stats.inc("sessions/created")
        return session

    def _stamp(self, meta: dict[str, Any], session: Session, ours: list[str]) -> None:
        """Put ``session`` on the request, leaving the spider's own keys alone."""
        meta["session_id"] = session.id
        if "cookiejar" in ours or "cookiejar" not in meta:
            meta["cookiejar"] = jar_key(session.id)
            _mark(ours, "cookiejar")
        if session.fingerprint is not None and ("impersonate" in ours or "impersonate" not in meta):
            meta["impersonate"] = session.fingerprint
            _mark(ours, "impersonate")
        elif "impersonate" in ours:
            meta.pop("impersonate", None)
        if POOL_KEY in ours or "proxy" not in meta or POOL_KEY in meta:
            # The pool's proxy (or none yet): the session's own, else the pool chooses.
            meta.pop("proxy", None)
            if session.proxy is None:
                meta.pop(POOL_KEY, None)
            else:
                meta[POOL_KEY] = session.proxy
            _mark(ours, POOL_KEY)
        meta[_OURS] = ours

    def _retired(self, session: Session, *, counted: bool = True) -> None:
        """Drop the jar of ``session``; ``counted``: its retirement is this worker's to
        count (another worker of the job may have retired it first)."""
        if counted:
            self._stats.inc(f"sessions/retired/{session.retired}")
        if self.cookies is not None:
            self.cookies.drop(jar_key(session.id))


def _check_profiles(names: tuple[str, ...]) -> None:
    """ConfigError for a profile curl_cffi cannot impersonate, at start rather than on
    each request. Without curl_cffi no transport can use any: the warning says so."""
    try:
        from skitter.downloader._curl import known_profile
    except ImportError:
        return
    unknown = [name for name in names if not known_profile(name)]
    if unknown:
        raise ConfigError(
            f"SESSION_FINGERPRINTS: curl_cffi has no browser profile {', '.join(unknown)} "
            "(profiles are names such as 'chrome', 'chrome124', 'safari', 'firefox')"
        )


def _transport(settings: Settings) -> str:
    """The crawl's transport (DOWNLOAD_TRANSPORT): a name, or a transport's."""
    chosen = settings.view(DownloaderSettings).download_transport
    return chosen if isinstance(chosen, str) else str(getattr(chosen, "name", chosen))


def _mark(ours: list[str], key: str) -> None:
    if key not in ours:
        ours.append(key)
