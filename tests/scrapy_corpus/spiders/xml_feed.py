"""XMLFeedSpider over an RSS feed: iternodes, one <item> at a time."""

from scrapy.spiders import XMLFeedSpider


class RssSpider(XMLFeedSpider):
    name = "rss"
    iterator = "iternodes"
    itertag = "item"

    def __init__(self, base_url="http://127.0.0.1:8000", *args, **kwargs):
        super().__init__(*args, **kwargs)
        self.start_urls = [f"{base_url}/feeds/quotes.xml"]

    def parse_node(self, response, node):
        return {
            "title": node.xpath("title/text()").get(),
            "link": node.xpath("link/text()").get(),
            "categories": node.xpath("category/text()").getall(),
        }
