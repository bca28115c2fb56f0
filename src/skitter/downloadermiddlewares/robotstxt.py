"""Scrapy's ``scrapy.downloadermiddlewares.robotstxt`` path for skitter's built-in."""

from skitter.downloader import RobotsTxtMiddleware

__all__ = ["RobotsTxtMiddleware"]
