"""CrawlSpider with the rest of Rule: cb_kwargs, follow=False, process_links (drops one
tag), process_request (notes the page a link came from) and parse_start_url."""

from scrapy.linkextractors import LinkExtractor
from scrapy.spiders import CrawlSpider, Rule


class TagsCrawlSpider(CrawlSpider):
    name = "tags_crawl"
    allowed_domains = ["127.0.0.1"]

    rules = (
        Rule(
            LinkExtractor(restrict_css=".tags-box", allow=r"/tag/"),
            callback="parse_tag",
            cb_kwargs={"source": "top ten"},
            follow=False,
            process_links="drop_humor",
            process_request="note_origin",
        ),
    )

    def __init__(self, base_url="http://127.0.0.1:8000", *args, **kwargs):
        super().__init__(*args, **kwargs)
        self.start_urls = [f"{base_url}/"]

    def drop_humor(self, links):
        return [link for link in links if link.text != "humor"]

    def note_origin(self, request, response):
        request.meta["origin"] = response.url
        return request

    def parse_start_url(self, response):
        return [{"start": response.url, "quotes": len(response.css("div.quote"))}]

    def parse_tag(self, response, source):
        yield {
            "tag": response.css("h3 a::text").get(),
            "source": source,
            "origin": response.meta["origin"],
            "first_page": len(response.css("div.quote")),
        }
