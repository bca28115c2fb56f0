"""Scrapy's ``scrapy.spidermiddlewares`` import paths, for ported projects.

``from scrapy.spidermiddlewares.httperror import HttpError`` becomes
``from skitter.spidermiddlewares.httperror import HttpError``: the same names, here,
for what skitter keeps in ``skitter.spider`` and ``skitter.exceptions``.
"""

__all__: list[str] = []
