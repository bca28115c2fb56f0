"""Spiders: what to crawl and how to read it, and the spider middlewares around them."""

from skitter.spider._basemiddleware import BaseSpiderMiddleware
from skitter.spider._builtin_middlewares import (
    DepthMiddleware,
    HttpErrorMiddleware,
    OffsiteMiddleware,
    RefererMiddleware,
    UrlLengthMiddleware,
)
from skitter.spider._decorators import (
    apply_callback_config,
    callback_config,
    config,
    every,
    has_config_callbacks,
    periodic_methods,
)
from skitter.spider._middleware import (
    SPIDER_MIDDLEWARES_BASE,
    RequestFilter,
    SpiderMiddlewareManager,
    aiter_output,
)
from skitter.spider._protocol import SpiderMiddleware
from skitter.spider._spider import Spider

__all__ = [
    "SPIDER_MIDDLEWARES_BASE",
    "BaseSpiderMiddleware",
    "DepthMiddleware",
    "HttpErrorMiddleware",
    "OffsiteMiddleware",
    "RefererMiddleware",
    "RequestFilter",
    "Spider",
    "SpiderMiddleware",
    "SpiderMiddlewareManager",
    "UrlLengthMiddleware",
    "aiter_output",
    "apply_callback_config",
    "callback_config",
    "config",
    "every",
    "has_config_callbacks",
    "periodic_methods",
]
