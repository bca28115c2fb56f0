"""The downloader: built-in middlewares over an aiohttp transport.

``Downloader`` is what the engine uses; ``AiohttpTransport`` is the default network
layer; the middleware classes are public so that DOWNLOADER_MIDDLEWARES can name,
subclass or switch them off.

Layout: the core at this level (``_downloader``, the Downloader; ``_middleware``, the
``DownloaderMiddleware`` contract and the onion that composes them; ``_transport``, the
``Transport`` contract and its shared stats; ``_aiohttp``, the default transport;
``_decode``, body decoding; ``_tls``, ``_dns`` and ``_local``, the crawl's TLS context,
its resolver and the ``data:``/``file:`` handler), the built-in middlewares in
``middlewares/`` and the browser transport in ``browser/``. The onion stays in the
core, as Scrapy keeps its middleware manager in ``core/downloader/`` apart from
``downloadermiddlewares/``: it is the Downloader's contract with *every* middleware, the
user's included, and the built-ins depend on it, never the other way round.
"""

from skitter.downloader._aiohttp import AiohttpTransport
from skitter.downloader._dns import Resolver, ThreadedResolver
from skitter.downloader._downloader import DOWNLOADER_MIDDLEWARES_BASE, Downloader
from skitter.downloader._middleware import (
    DownloaderMiddleware,
    DownloadHandler,
    DownloadResult,
    compose,
)
from skitter.downloader._transport import Transport
from skitter.downloader.browser import BrowserTransport, wants_render
from skitter.downloader.middlewares import (
    AutoRenderMiddleware,
    ConditionalRecrawlMiddleware,
    CookiesMiddleware,
    DefaultHeadersMiddleware,
    HttpAuthMiddleware,
    HttpCacheMiddleware,
    HttpCompressionMiddleware,
    HttpProxyMiddleware,
    MetaRefreshMiddleware,
    OffsiteGuard,
    OffsiteMiddleware,
    ProxyPoolMiddleware,
    RedirectMiddleware,
    RetryMiddleware,
    RobotsTxtMiddleware,
    SessionMiddleware,
    UserAgentMiddleware,
    parse_retry_after,
)

__all__ = [
    "DOWNLOADER_MIDDLEWARES_BASE",
    "AiohttpTransport",
    "AutoRenderMiddleware",
    "BrowserTransport",
    "ConditionalRecrawlMiddleware",
    "CookiesMiddleware",
    "DefaultHeadersMiddleware",
    "DownloadHandler",
    "DownloadResult",
    "Downloader",
    "DownloaderMiddleware",
    "HttpAuthMiddleware",
    "HttpCacheMiddleware",
    "HttpCompressionMiddleware",
    "HttpProxyMiddleware",
    "MetaRefreshMiddleware",
    "OffsiteGuard",
    "OffsiteMiddleware",
    "ProxyPoolMiddleware",
    "RedirectMiddleware",
    "Resolver",
    "RetryMiddleware",
    "RobotsTxtMiddleware",
    "SessionMiddleware",
    "ThreadedResolver",
    "Transport",
    "UserAgentMiddleware",
    "compose",
    "parse_retry_after",
    "wants_render",
]
