"""Spiders: what to crawl and how to read it."""

from skitter.spider._spider import Spider

__all__ = ["Spider"]
