"""sitemap_alternate_links: each author's French page (an xhtml:link alternate) is
crawled too."""

from scrapy.spiders import SitemapSpider


class AlternateSitemapSpider(SitemapSpider):
    name = "sitemap_alternates"
    sitemap_follow = ["authors"]
    sitemap_alternate_links = True

    def __init__(self, base_url="http://127.0.0.1:8000", *args, **kwargs):
        super().__init__(*args, **kwargs)
        self.sitemap_urls = [f"{base_url}/sitemap.xml"]

    def parse(self, response):
        yield {
            "url": response.url,
            "lang": response.xpath("/html/@lang").get(),
            "name": response.css("h3.author-title::text").get().strip(),
        }
