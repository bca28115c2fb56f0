"""Scrapy's ``scrapy.spidermiddlewares`` import paths, for ported projects.

``from scrapy.spidermiddlewares.httperror import HttpError`` becomes
``from skitter.spidermiddlewares.httperror import HttpError``, and
``SPIDER_MIDDLEWARES = {"scrapy.spidermiddlewares.referer.RefererMiddleware": None}``
switches off skitter's own under the ``skitter.`` path (httperror, offsite, referer,
urllength, depth).
"""

__all__: list[str] = []
