"""Scrapy's ``scrapy.http.headers``: the module plug-ins import ``Headers`` from
(scrapy-splash, scrapy-playwright), the same class as ``skitter.http.Headers``."""

from __future__ import annotations

from skitter.http._headers import Headers

__all__ = ["Headers"]
