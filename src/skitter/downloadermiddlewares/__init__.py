"""Scrapy's ``scrapy.downloadermiddlewares`` import paths, for ported projects.

``from scrapy.downloadermiddlewares.retry import get_retry_request`` becomes
``from skitter.downloadermiddlewares.retry import get_retry_request``.
"""

__all__: list[str] = []
