"""Scrapy's ``scrapy.utils`` helpers that spiders import, under the same module paths
(``skitter.utils.request``, ``skitter.utils.response``), so a ported spider changes
only its import lines."""

__all__: list[str] = []
