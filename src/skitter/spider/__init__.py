"""Spiders: what to crawl and how to read it, and the spider middlewares around them."""

from skitter.spider._builtin_middlewares import (
    DepthMiddleware,
    HttpErrorMiddleware,
    OffsiteMiddleware,
    RefererMiddleware,
    UrlLengthMiddleware,
)
from skitter.spider._middleware import (
    SPIDER_MIDDLEWARES_BASE,
    SpiderMiddlewareManager,
    aiter_output,
)
from skitter.spider._spider import Spider

__all__ = [
    "SPIDER_MIDDLEWARES_BASE",
    "DepthMiddleware",
    "HttpErrorMiddleware",
    "OffsiteMiddleware",
    "RefererMiddleware",
    "Spider",
    "SpiderMiddlewareManager",
    "UrlLengthMiddleware",
    "aiter_output",
]
