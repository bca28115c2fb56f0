"""The built-in downloader middlewares, one module each, with Scrapy's names and orders.

They are plain ``DownloaderMiddleware``s (``downloader._middleware``): nothing here is
special to the Downloader except that ``DOWNLOADER_MIDDLEWARES_BASE`` lists them, and
that the Downloader reuses OffsiteMiddleware's guard at the centre of the onion and
CookiesMiddleware's jar for rendered pages, and gives AutoRenderMiddleware the layers inside
it (``bind_inner``).
"""

from skitter.downloader.middlewares._auth import HttpAuthMiddleware
from skitter.downloader.middlewares._conditional import ConditionalRecrawlMiddleware
from skitter.downloader.middlewares._cookies import CookiesMiddleware
from skitter.downloader.middlewares._headers import (
    DefaultHeadersMiddleware,
    HttpCompressionMiddleware,
    UserAgentMiddleware,
)
from skitter.downloader.middlewares._httpcache import HttpCacheMiddleware
from skitter.downloader.middlewares._metarefresh import MetaRefreshMiddleware
from skitter.downloader.middlewares._offsite import OffsiteGuard, OffsiteMiddleware
from skitter.downloader.middlewares._proxy import HttpProxyMiddleware
from skitter.downloader.middlewares._proxypool import ProxyPoolMiddleware
from skitter.downloader.middlewares._redirect import RedirectMiddleware
from skitter.downloader.middlewares._render_auto import AutoRenderMiddleware, render_default
from skitter.downloader.middlewares._retry import RetryMiddleware
from skitter.downloader.middlewares._retry_after import parse_retry_after
from skitter.downloader.middlewares._robots import RobotsTxtMiddleware
from skitter.downloader.middlewares._sessions import SessionMiddleware

__all__ = [
    "AutoRenderMiddleware",
    "ConditionalRecrawlMiddleware",
    "CookiesMiddleware",
    "DefaultHeadersMiddleware",
    "HttpAuthMiddleware",
    "HttpCacheMiddleware",
    "HttpCompressionMiddleware",
    "HttpProxyMiddleware",
    "MetaRefreshMiddleware",
    "OffsiteGuard",
    "OffsiteMiddleware",
    "ProxyPoolMiddleware",
    "RedirectMiddleware",
    "RetryMiddleware",
    "RobotsTxtMiddleware",
    "SessionMiddleware",
    "UserAgentMiddleware",
    "parse_retry_after",
    "render_default",
]
