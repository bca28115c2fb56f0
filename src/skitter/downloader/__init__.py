"""The downloader: built-in middlewares over an aiohttp transport.

``Downloader`` is what the engine uses; ``AiohttpTransport`` is the default network
layer; the middleware classes are public so that DOWNLOADER_MIDDLEWARES can name,
subclass or switch them off.
"""

from skitter.downloader._browser import BrowserTransport, wants_render
from skitter.downloader._cookies import CookiesMiddleware
from skitter.downloader._downloader import DOWNLOADER_MIDDLEWARES_BASE, Downloader
from skitter.downloader._headers import (
    DefaultHeadersMiddleware,
    HttpCompressionMiddleware,
    UserAgentMiddleware,
)
from skitter.downloader._middleware import DownloadHandler, DownloadResult, compose
from skitter.downloader._offsite import OffsiteGuard, OffsiteMiddleware
from skitter.downloader._proxy import HttpProxyMiddleware
from skitter.downloader._redirect import RedirectMiddleware
from skitter.downloader._retry import RetryMiddleware
from skitter.downloader._retry_after import parse_retry_after
from skitter.downloader._robots import RobotsTxtMiddleware
from skitter.downloader._transport import AiohttpTransport, Transport

__all__ = [
    "DOWNLOADER_MIDDLEWARES_BASE",
    "AiohttpTransport",
    "BrowserTransport",
    "CookiesMiddleware",
    "DefaultHeadersMiddleware",
    "DownloadHandler",
    "DownloadResult",
    "Downloader",
    "HttpCompressionMiddleware",
    "HttpProxyMiddleware",
    "OffsiteGuard",
    "OffsiteMiddleware",
    "RedirectMiddleware",
    "RetryMiddleware",
    "RobotsTxtMiddleware",
    "Transport",
    "UserAgentMiddleware",
    "compose",
    "parse_retry_after",
    "wants_render",
]
