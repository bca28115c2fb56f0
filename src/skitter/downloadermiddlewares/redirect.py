"""Scrapy's ``scrapy.downloadermiddlewares.redirect`` path for skitter's built-ins."""

from skitter.downloader import MetaRefreshMiddleware, RedirectMiddleware

__all__ = ["MetaRefreshMiddleware", "RedirectMiddleware"]
