"""Optional machinery a crawl switches on by setting, under Scrapy's import paths.

``skitter.extensions.httpcache`` holds the HTTP cache's policies and storages, the
pieces ``HttpCacheMiddleware`` (``skitter.downloader``) is built from, so that a ported
``HTTPCACHE_POLICY = "scrapy.extensions.httpcache.RFC2616Policy"`` has a skitter
counterpart at the same place. This package sits below the downloader: it knows
requests, responses and settings, never the middleware that uses it.
"""

__all__: list[str] = []
