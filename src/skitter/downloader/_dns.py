"""The crawl's DNS: one resolver, with a bounded cache, for every lookup of the crawl.

The transport's connections and the per-IP download slots (DOWNLOAD_SLOT_BY = "ip",
CONCURRENT_REQUESTS_PER_IP) ask the same ``CrawlResolver``, so a host is looked up
once and both agree on its address. The crawler builds it and hands it to both.

- DNS_RESOLVER: a dotted path to a class whose instances have
  ``async resolve(host: str) -> list[str]`` (IP addresses, best first; raise OSError,
  e.g. ``socket.gaierror``, when the name does not resolve). It is built with
  ``from_settings(settings)`` when it has one, else with no argument. The default,
  ``ThreadedResolver``, is the system's resolver (``getaddrinfo`` in a thread, through
  aiohttp's resolver): ``/etc/hosts``, IPv4 and IPv6. Scrapy's resolver names
  (``scrapy.resolver.CachingThreadedResolver``, ``...CachingHostnameResolver``) mean
  the default, which does what both do.
- DNS_TIMEOUT bounds each lookup; one that takes longer fails the download with a
  ConnectError (retried), as a name that does not resolve does.
- DNSCACHE_ENABLED / DNSCACHE_SIZE: answers are kept for at most ``_TTL`` seconds (Scrapy
  keeps them for the whole crawl; a long crawl should see a site move), for at most
  DNSCACHE_SIZE host names, the least recently used going first. Failures are not
  cached. Lookups of one host at the same time share one query, which runs to its end
  (DNS_TIMEOUT at most) even if every download waiting for it is cancelled, so its
  answer still fills the cache.
"""

from __future__ import annotations

import asyncio
import inspect
import ipaddress
import socket
import time
from collections import OrderedDict
from collections.abc import Callable
from typing import TYPE_CHECKING, Any, Protocol

import aiohttp
from aiohttp.abc import AbstractResolver, ResolveResult

from skitter._components import load_object
from skitter._tasks import TaskSet
from skitter.exceptions import ConfigError
from skitter.settings import NetworkSettings

if TYPE_CHECKING:
    from skitter.settings import Settings

__all__ = ["AiohttpResolver", "CrawlResolver", "Resolver", "ThreadedResolver", "crawl_resolver"]

_TTL = 300.0  # seconds an answer is trusted
_SCRAPY_DEFAULTS = frozenset(
    {"scrapy.resolver.CachingThreadedResolver", "scrapy.resolver.CachingHostnameResolver"}
)


class Resolver(Protocol):
    """What DNS_RESOLVER names: host name in, IP addresses out (OSError if none)."""

    async def resolve(self, host: str) -> list[str]: ...


class ThreadedResolver:
    """The system's resolver: ``getaddrinfo`` in a thread (aiohttp's ThreadedResolver)."""

    __slots__ = ("_inner",)

    def __init__(self) -> None:
        self._inner: aiohttp.ThreadedResolver | None = None

    async def resolve(self, host: str) -> list[str]:
        if self._inner is None:  # it needs the running loop
            self._inner = aiohttp.ThreadedResolver()
        found = await self._inner.resolve(host, 0, family=socket.AF_UNSPEC)
        return list(dict.fromkeys(answer["host"] for answer in found))


class CrawlResolver:
    """DNS_RESOLVER bounded by DNS_TIMEOUT, behind the DNSCACHE_* cache."""

    __slots__ = ("_answers", "_clock", "_inner", "_lookups", "_pending", "_size", "_timeout")

    def __init__(
        self,
        inner: Resolver,
        *,
        timeout: float | None = 60.0,
        cache_size: int = 10_000,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        self._inner = inner
        self._timeout = timeout or None
        self._size = cache_size  # 0: no cache
        self._clock = clock
        self._answers: OrderedDict[str, tuple[float, list[str]]] = OrderedDict()
        self._pending: dict[str, asyncio.Future[list[str]]] = {}
        self._lookups = TaskSet()

    async def resolve(self, host: str) -> list[str]:
        """The addresses of ``host``; OSError (``socket.gaierror``) if there are none."""
        key = host.lower()
        answers = self._answers
        cached = answers.get(key)
        if cached is not None:
            if cached[0] > self._clock():
                answers.move_to_end(key)
                return cached[1]
            del answers[key]
        pending = self._pending.get(key)
        if pending is None:
            pending = self._lookups.spawn(self._lookup(key))
            self._pending[key] = pending
            pending.add_done_callback(lambda done: self._settle(key, done))
        # Shielded: one waiter cancelled (its download timed out) leaves the query to
        # the others, and its answer to the cache.
        return await asyncio.shield(pending)

    def _settle(self, key: str, done: asyncio.Future[list[str]]) -> None:
        self._pending.pop(key, None)
        if not done.cancelled():
            done.exception()  # retrieved: every waiter may have gone (cancelled) by now

    async def first(self, host: str) -> str | None:
        """The first address of ``host``, None when it does not resolve (the per-IP
        slots' question)."""
        try:
            found = await self.resolve(host)
        except OSError:
            return None
        return found[0] if found else None

    async def _lookup(self, host: str) -> list[str]:
        inner = self._inner
        try:
            async with asyncio.timeout(self._timeout):
                found = [str(address) for address in await inner.resolve(host)]
            for address in found:
                ipaddress.ip_address(address.partition("%")[0])
        except TimeoutError:
            raise socket.gaierror(
                socket.EAI_AGAIN,
                f"DNS lookup of {host!r} took longer than DNS_TIMEOUT ({self._timeout} s)",
            ) from None
        except OSError:
            raise
        except Exception as exc:  # a DNS_RESOLVER breaking its contract: fail the lookup
            raise socket.gaierror(
                socket.EAI_FAIL, f"DNS_RESOLVER {type(inner).__name__} failed: {exc!r}"
            ) from exc
        if not found:
            raise socket.gaierror(socket.EAI_NONAME, f"{host!r} has no address")
        if self._size:
            answers = self._answers
            answers[host] = (self._clock() + _TTL, found)
            answers.move_to_end(host)
            while len(answers) > self._size:
                answers.popitem(last=False)
        return found


class AiohttpResolver(AbstractResolver):
    """aiohttp's connector asking the crawl's resolver."""

    def __init__(self, resolver: CrawlResolver) -> None:
        self._resolver = resolver

    async def resolve(
        self, host: str, port: int = 0, family: socket.AddressFamily = socket.AF_INET
    ) -> list[ResolveResult]:
        out: list[ResolveResult] = []
        for address in await self._resolver.resolve(host):
            ip = ipaddress.ip_address(address.partition("%")[0])
            found = socket.AF_INET6 if ip.version == 6 else socket.AF_INET
            if family and found != family:
                continue
            out.append(
                ResolveResult(
                    hostname=host,
                    host=address,
                    port=port,
                    family=found,
                    proto=0,
                    flags=socket.AI_NUMERICHOST,
                )
            )
        if not out:
            raise socket.gaierror(socket.EAI_ADDRFAMILY, f"{host!r} has no address of {family!r}")
        return out

    async def close(self) -> None:
        return None


def crawl_resolver(settings: Settings) -> CrawlResolver:
    """The crawl's resolver from DNS_RESOLVER, DNS_TIMEOUT and DNSCACHE_*; ConfigError
    names the setting that cannot work."""
    own = settings.view(NetworkSettings)
    size = own.dnscache_size
    enabled = own.dnscache_enabled
    if enabled and size < 1:
        raise ConfigError(f"DNSCACHE_SIZE must be 1 or more, got {size}")
    timeout = own.dns_timeout
    if timeout < 0:
        raise ConfigError(f"DNS_TIMEOUT must be 0 (no limit) or more, got {timeout}")
    return CrawlResolver(
        _build(settings, own.dns_resolver),
        timeout=timeout,
        cache_size=size if enabled else 0,
    )


def _build(settings: Settings, path: Any) -> Resolver:
    if path in _SCRAPY_DEFAULTS:
        return ThreadedResolver()
    cls = load_object(path)
    factory = getattr(cls, "from_settings", None)
    resolver = factory(settings) if callable(factory) else cls()
    if not inspect.iscoroutinefunction(getattr(resolver, "resolve", None)):
        raise ConfigError(
            f"DNS_RESOLVER {path!r} must be a class with an async resolve(host) -> list of IPs"
        )
    return resolver  # type: ignore[no-any-return]
