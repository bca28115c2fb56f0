"""``BaseSpiderMiddleware`` (Scrapy 2.13's ``scrapy.spidermiddlewares.base``); see
``skitter.spider._basemiddleware``.
"""

from skitter.spider import BaseSpiderMiddleware

__all__ = [
    "BaseSpiderMiddleware",
]
