"""The feed and sitemap readers of the generic spiders, which Scrapy's import paths in
``skitter.utils`` (``iterators``, ``sitemap``) re-export.
"""

from skitter.spiders._iterators import csv_rows, xml_nodes
from skitter.spiders._sitemaps import Sitemap, sitemap_urls_from_robots

__all__ = [
    "Sitemap",
    "csv_rows",
    "sitemap_urls_from_robots",
    "xml_nodes",
]
