"""Link extractors, at Scrapy's import path: ``from skitter.linkextractors import
LinkExtractor``. ``LinkExtractor`` is ``LxmlLinkExtractor``, as in Scrapy."""

from skitter.linkextractors._extensions import IGNORED_EXTENSIONS
from skitter.linkextractors._lxml import LxmlLinkExtractor

LinkExtractor = LxmlLinkExtractor

__all__ = ["IGNORED_EXTENSIONS", "LinkExtractor", "LxmlLinkExtractor"]
