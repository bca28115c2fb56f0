"""Scrapy's module path for the extractor: ``skitter.linkextractors.lxmlhtml``."""

from skitter.linkextractors._lxml import LxmlLinkExtractor

__all__ = ["LxmlLinkExtractor"]
