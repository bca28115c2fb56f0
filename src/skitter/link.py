"""Scrapy's ``scrapy.link``: the Link a link extractor returns."""

from skitter.http import Link

__all__ = ["Link"]
