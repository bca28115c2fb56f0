"""SitemapSpider from the index: sitemap_follow keeps one sitemap, sitemap_filter keeps
the entries changed since 2025 (their lastmod), the default callback is parse."""

from datetime import datetime

from scrapy.spiders import SitemapSpider


class RecentSitemapSpider(SitemapSpider):
    name = "sitemap_filter"
    sitemap_follow = [r"/sitemaps/quotes\."]

    def __init__(self, base_url="http://127.0.0.1:8000", *args, **kwargs):
        super().__init__(*args, **kwargs)
        self.sitemap_urls = [f"{base_url}/sitemap.xml"]

    def sitemap_filter(self, entries):
        for entry in entries:
            if datetime.strptime(entry["lastmod"], "%Y-%m-%d") >= datetime(2025, 1, 1):
                yield entry

    def parse(self, response):
        yield {"url": response.url, "added": response.css("time::attr(datetime)").get()}
