"""HttpProxyMiddleware: proxies from the environment, as curl and Scrapy use them.

``http_proxy``, ``https_proxy`` and ``no_proxy`` (read once, when the crawl starts,
through ``urllib.request.getproxies`` and ``proxy_bypass``) give a request its proxy
when it has none: a request that sets ``meta["proxy"]`` keeps it, and
``meta["proxy"] = None`` sends that request directly whatever the environment says.
The transport does the proxying itself, including ``Proxy-Authorization`` from
credentials in the proxy URL.

A proxy taken from the environment is marked with ``meta["_scheme_proxy"]`` (Scrapy's
key), so that a redirect to another scheme drops it and the right one is picked again.
"""

from __future__ import annotations

from typing import Any
from urllib.request import getproxies, proxy_bypass

from skitter._types import CrawlContext
from skitter.exceptions import NotConfigured
from skitter.http import Request, url_host
from skitter.settings import DownloaderSettings

__all__ = ["HttpProxyMiddleware"]


def _environment_proxies() -> dict[str, str]:
    return {
        scheme: url for scheme, url in getproxies().items() if scheme in ("http", "https") and url
    }


class HttpProxyMiddleware:
    """Sets ``meta["proxy"]`` from the environment for requests that have none."""

    def __init__(self, proxies: dict[str, str] | None = None) -> None:
        #: scheme -> proxy URL, e.g. ``{"http": "http://proxy:3128"}``; by default the
        #: environment's, read now (as Scrapy's ``HttpProxyMiddleware()`` does)
        self.proxies = _environment_proxies() if proxies is None else proxies

    @classmethod
    def from_crawler(cls, crawler: CrawlContext) -> HttpProxyMiddleware:
        if not crawler.settings.view(DownloaderSettings).httpproxy_enabled:
            raise NotConfigured
        return cls()

    def process_request(self, request: Request, spider: Any = None) -> None:
        meta = request.meta
        if "proxy" in meta or not self.proxies:
            return
        scheme = request.url.partition(":")[0].lower()
        proxy = self.proxies.get(scheme)
        if proxy is None or proxy_bypass(url_host(request.url)):
            return
        meta["proxy"] = proxy
        meta["_scheme_proxy"] = True
