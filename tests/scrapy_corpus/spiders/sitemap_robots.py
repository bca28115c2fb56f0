"""SitemapSpider from robots.txt: its Sitemap: line, the index, the gzipped sitemaps,
sitemap_rules sending URLs to callbacks (tag URLs match no rule: skipped)."""

from scrapy.spiders import SitemapSpider


class RobotsSitemapSpider(SitemapSpider):
    name = "sitemap_robots"
    sitemap_rules = [
        ("/quote/", "parse_quote"),
        ("/author/", "parse_author"),
    ]

    def __init__(self, base_url="http://127.0.0.1:8000", *args, **kwargs):
        super().__init__(*args, **kwargs)
        self.sitemap_urls = [f"{base_url}/robots.txt"]

    def parse_quote(self, response):
        yield {
            "quote": response.css("span.text::text").get(),
            "added": response.css("time::attr(datetime)").get(),
        }

    def parse_author(self, response):
        yield {"author": response.css("h3.author-title::text").get().strip()}
