"""Scrapy's ``scrapy.downloadermiddlewares`` import paths, for ported projects.

``from scrapy.downloadermiddlewares.retry import get_retry_request`` becomes
``from skitter.downloadermiddlewares.retry import get_retry_request``, and a setting that
switches a built-in off, ``{"scrapy.downloadermiddlewares.useragent.UserAgentMiddleware":
None}``, switches off skitter's own under the ``skitter.`` path: each module here names
the built-ins Scrapy keeps there (useragent, defaultheaders, httpcompression, redirect
and meta refresh, cookies, httpproxy, httpauth, httpcache, robotstxt, offsite, retry).
"""

__all__: list[str] = []
