"""Scrapy's ``scrapy.link``: the Link a link extractor returns."""

from skitter.http._link import Link

__all__ = ["Link"]
