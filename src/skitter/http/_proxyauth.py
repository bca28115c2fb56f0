"""The credentials of a stored request's proxy: kept off the store, held in memory.

A request's ``meta["proxy"]`` may carry credentials (``http://user:pass@host:port``,
Scrapy's documented way). A stored request must not: the job directory's database, a
Redis job and an item's chain of media requests outlive the process, and Redis is read
by every worker. So the codec stores the proxy without them, beside a *mark*
(``meta["_proxy_auth"]``: a digest of the user name, or ``***`` for a token given as the
user name, which says that credentials were given and for which user, nothing more),
and ``HELD`` keeps them in this process's memory, by proxy and mark.

When the request is downloaded, the Downloader gives them back (``restore``). This
process holds the credentials it was given: those of the requests it stored itself,
and, from the start of a crawl, those of PROXY_CREDENTIALS, PROXY_LIST and the
environment's proxies -- what every process of a job can be given alike. A request
whose credentials this process was never given (another worker stored it, or a killed
run of a resumed job did) is never sent without them: ``restore`` raises a
``FatalError`` that says how to give them, so the crawl stops with a non-zero exit
status and the task stays queued for a run that has them.

Credentials are held by proxy *and* user name, since a proxy may take many users (one
per sticky session, say); the latest password given for a user is the one sent, and a
proxy that takes a token holds one (the latest). ``LIMIT`` bounds how many users, so
that a spider that makes a user name per request fails loudly instead of growing
without end.
"""

from __future__ import annotations

import hashlib
import re
from typing import Any

from skitter._secrets import MASK, authority_problem, mask_url, split_userinfo
from skitter.exceptions import ConfigError, FatalError
from skitter.http._request import Request

__all__ = [
    "ENV_PROXY_FLAG",
    "HELD",
    "LIMIT",
    "MARK",
    "ProxyCredentials",
    "restore",
    "without_proxy_secrets",
]

#: The meta key of a stored request whose proxy had credentials: their masked userinfo.
MARK = "_proxy_auth"
#: HttpProxyMiddleware's mark of a proxy from the environment (never stored).
ENV_PROXY_FLAG = "_scheme_proxy"
#: How many proxy users one process holds credentials for.
LIMIT = 10_000
_AUTHORITY_END = re.compile(r"[/?#]")
_HOW = (
    "give them to every process that crawls the job: PROXY_CREDENTIALS = "
    "['http://user:password@host:port', ...] in the settings (or -s PROXY_CREDENTIALS=... "
    "or the environment variable SKITTER_PROXY_CREDENTIALS; a file with one URL a line "
    "also works), or set meta['proxy'] in a downloader middleware, at download time"
)


def _mark(userinfo: str) -> str:
    """What a stored request keeps of its proxy's userinfo: a digest of the user name
    (the store holds no part of the credentials), or ``***`` for a token."""
    user, colon, _ = userinfo.partition(":")
    if not colon:
        return MASK
    return hashlib.sha256(user.encode("utf-8", "surrogatepass")).hexdigest()[:16]


def _key(prefix: str, rest: str) -> str:
    """A proxy as credentials are held for it: scheme and ``host:port``, lower case."""
    return (prefix + _AUTHORITY_END.split(rest, maxsplit=1)[0]).lower()


class ProxyCredentials:
    """Proxy credentials by (proxy, masked userinfo)."""

    def __init__(self) -> None:
        self._held: dict[tuple[str, str], str] = {}

    def __len__(self) -> int:
        return len(self._held)

    def strip(self, proxy: str) -> tuple[str, str] | None:
        """``proxy`` without its credentials, and their mark; None when it has none.
        The credentials stay here, for ``give_back``."""
        prefix, userinfo, rest = split_userinfo(proxy)
        if userinfo is None:
            return None
        mark = _mark(userinfo)
        key = (_key(prefix, rest), mark)
        if self._held.get(key) != userinfo:
            if key not in self._held and len(self._held) >= LIMIT:
                raise FatalError(
                    f"this process holds the credentials of {LIMIT} proxy users already, "
                    f"and {mask_url(proxy)} would be one more: a spider that makes a proxy "
                    "user per request must set meta['proxy'] in a downloader middleware, at "
                    "download time, so that stored requests need none"
                )
            self._held[key] = userinfo
        return prefix + rest, mark

    def hold(self, proxy: str, source: str) -> None:
        """Keep the credentials of ``proxy``, a URL ``source`` (a setting) gave;
        ConfigError, at start, for one that has none or would be misread."""
        problem = authority_problem(proxy)
        if problem is not None:
            raise ConfigError(f"{source}: {mask_url(proxy)!r}: {problem}")
        if self.strip(proxy) is None and source == "PROXY_CREDENTIALS":
            raise ConfigError(
                f"PROXY_CREDENTIALS: {mask_url(proxy)!r} has no user:password@ to give"
            )

    def give_back(self, proxy: str, mark: str) -> str | None:
        """``proxy`` (stripped) with the credentials its mark stands for, or None when
        this process was not given them."""
        prefix, _, rest = split_userinfo(proxy)
        userinfo = self._held.get((_key(prefix, rest), mark))
        return None if userinfo is None else f"{prefix}{userinfo}@{rest}"


#: The credentials this process holds.
HELD = ProxyCredentials()


def restore(request: Request) -> None:
    """Put back the credentials of a stored request's proxy (``meta`` has ``MARK``);
    FatalError when this process was not given them. A proxy changed since it was
    stored (a middleware's own, or None) is left as it is."""
    meta = request.meta
    mark = meta.pop(MARK)
    proxy = meta.get("proxy")
    if not isinstance(proxy, str) or split_userinfo(proxy)[1] is not None:
        return
    full = HELD.give_back(proxy, mark)
    if full is None:
        prefix, _, rest = split_userinfo(proxy)
        raise FatalError(
            f"{request!r} was stored without the credentials of its proxy "
            f"{prefix}{MASK}@{rest} (they never go to the job directory or Redis), and "
            f"this process was not given them; {_HOW}. The job keeps the task for that run."
        )
    meta["proxy"] = full


def without_proxy_secrets(meta: dict[str, Any]) -> dict[str, Any]:
    """``meta`` as it may be stored: without a proxy from this worker's environment
    (HttpProxyMiddleware picks the decoding worker's own), and with the credentials in
    a proxy URL of the spider's replaced by their mark."""
    meta = dict(meta)
    if meta.pop(ENV_PROXY_FLAG, None):
        meta.pop("proxy", None)
        meta.pop(MARK, None)
        return meta
    proxy = meta.get("proxy")
    if isinstance(proxy, str) and "@" in proxy:
        stripped = HELD.strip(proxy)
        if stripped is not None:
            meta["proxy"], meta[MARK] = stripped
    return meta
