"""Which transport downloads a request: DOWNLOAD_TRANSPORT, or ``meta["transport"]``.

``aiohttp`` (HTTP/1.1, the default and the fast path), ``httpx`` (HTTP/2, extra
``skitter[http2]``), ``curl`` (a browser's TLS fingerprint, extra
``skitter[impersonate]``) and ``browser`` (rendering in Chromium). The crawl's own
transport (DOWNLOAD_TRANSPORT) is built when the crawl starts, so an unknown name, a
missing extra or a setting the transport cannot honour stops it there (ConfigError,
exit 2). Another one named by ``meta["transport"]`` is built and opened on its first
request, so a crawl that never asks for httpx never imports it; an unknown name, or
one that cannot be built, fails that request as an ignored one (its task is BAD, with
the reason, never retried) and counts ``downloader/transport_unavailable``.

DOWNLOAD_TRANSPORT may instead be a transport of the user's own: a **transport factory**
(or a dotted path to one), called as the built-in classes are,
``factory(settings, stats, signals=..., spider=..., resolver=...)``, returning the
crawl's Transport. A ``StreamingTransport`` subclass is one as it is;
``skitter.testing.MockTransport(handler)`` is one that answers without a network.
``meta["transport"]`` calls it by the ``name`` attribute of what it built.
"""

from __future__ import annotations

import asyncio
import importlib
import logging
from collections.abc import Callable
from typing import TYPE_CHECKING

from skitter._components import load_object
from skitter.exceptions import ConfigError, IgnoreRequest
from skitter.http import Request, Response

if TYPE_CHECKING:
    from skitter._types import StatsSink
    from skitter.downloader._streaming import StreamingTransport
    from skitter.downloader._transport import Transport

__all__ = [
    "TRANSPORT_NAMES",
    "TransportFactory",
    "Transports",
    "built_by",
    "check_name",
    "own_factory",
    "transport_class",
]

logger = logging.getLogger("skitter.downloader")

TRANSPORT_NAMES = ("aiohttp", "httpx", "curl", "browser")
# name -> (module, class, the extra that installs what it needs)
_OPTIONAL: dict[str, tuple[str, str, str]] = {
    "httpx": ("skitter.downloader._httpx", "HttpxTransport", "http2"),
    "curl": ("skitter.downloader._curl", "CurlTransport", "impersonate"),
}


#: A transport of the user's own: ``factory(settings, stats, *, signals, spider, resolver)``.
TransportFactory = Callable[..., "Transport"]
#: What ``meta["transport"]`` calls a transport of the user's own that has no ``name``.
CUSTOM_NAME = "custom"


def own_factory(value: object) -> TransportFactory | None:
    """DOWNLOAD_TRANSPORT's factory of the user's own, loaded; None for a built-in name.
    ConfigError for a value that is neither."""
    if isinstance(value, str) and value in TRANSPORT_NAMES:
        return None
    factory = load_object(value) if isinstance(value, str) and "." in value else value
    if not callable(factory):
        raise ConfigError(
            f"DOWNLOAD_TRANSPORT {value!r}: must be one of {', '.join(TRANSPORT_NAMES)}, or a "
            "transport factory (called with the crawl's settings and stats, it returns a "
            "Transport), or a dotted path to one"
        )
    return factory  # type: ignore[no-any-return]


def built_by(factory: TransportFactory, transport: object) -> tuple[str, Transport]:
    """What ``factory`` built, checked, and its name for ``meta["transport"]``."""
    missing = [
        name for name in ("open", "close", "fetch") if not callable(getattr(transport, name, None))
    ]
    if missing:
        raise ConfigError(
            f"DOWNLOAD_TRANSPORT {factory!r} built {transport!r}, which is not a Transport "
            f"(no {', '.join(missing)})"
        )
    name = getattr(transport, "name", None) or CUSTOM_NAME
    if not isinstance(name, str) or name == "browser":
        raise ConfigError(
            f"DOWNLOAD_TRANSPORT {factory!r}: its transport's name {name!r} cannot be what "
            "meta['transport'] calls it (a string other than 'browser')"
        )
    return name, transport  # type: ignore[return-value]


def check_name(name: object, where: str) -> str:
    if name not in TRANSPORT_NAMES:
        raise ConfigError(f"{where} {name!r}: must be one of {', '.join(TRANSPORT_NAMES)}")
    assert isinstance(name, str)
    return name


def transport_class(name: str) -> type[StreamingTransport]:
    """The class of an optional transport, imported now; ConfigError names the extra."""
    module, cls, extra = _OPTIONAL[name]
    try:
        found: type[StreamingTransport] = getattr(importlib.import_module(module), cls)
    except ImportError as exc:
        raise ConfigError(
            f"the {name} transport needs {exc.name or 'a package'} (not installed): "
            f"pip install 'skitter[{extra}]'"
        ) from None
    return found


class Transports:
    """The crawl's HTTP transports by name; the ones built on first use are closed here."""

    def __init__(
        self,
        default_name: str,
        default: Transport,
        build: Callable[[str], Transport],
        stats: StatsSink,
    ) -> None:
        self._ready: dict[str, Transport] = {default_name: default}
        self._refused: dict[str, str] = {}
        self._opened: list[Transport] = []
        self._build = build
        self._stats = stats
        self._lock: asyncio.Lock | None = None

    async def fetch(self, name: str, request: Request) -> Response:
        """``request`` downloaded by the transport ``name`` (built now if need be)."""
        if not isinstance(name, str):  # a value from meta: no hash taken on trust
            name = repr(name)
        transport = self._ready.get(name)
        if transport is None:
            transport = await self._get(name, request)
        return await transport.fetch(request)

    async def _get(self, name: str, request: Request) -> Transport:
        if self._lock is None:
            self._lock = asyncio.Lock()
        async with self._lock:  # one build for the requests that all came first
            transport = self._ready.get(name)
            if transport is not None:
                return transport
            reason = self._refused.get(name)
            if reason is None:
                try:
                    check_name(name, "meta['transport']")
                    transport = self._build(name)
                    await transport.open()
                except ConfigError as exc:
                    reason = self._refused[name] = str(exc)
                else:
                    self._opened.append(transport)
                    self._ready[name] = transport
                    return transport
        self._stats.inc("downloader/transport_unavailable")
        raise IgnoreRequest(f"{request!r}: cannot download: {reason}", request=request)

    async def close(self) -> None:
        opened, self._opened = self._opened, []
        for transport in opened:
            try:
                await transport.close()
            except Exception:  # the others must close all the same
                logger.exception("closing the %s transport failed", type(transport).__name__)
