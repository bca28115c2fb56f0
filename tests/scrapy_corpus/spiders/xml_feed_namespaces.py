"""XMLFeedSpider with the xml iterator and a namespace prefix (dc:creator)."""

from scrapy.spiders import XMLFeedSpider


class DublinCoreSpider(XMLFeedSpider):
    name = "rss_dc"
    iterator = "xml"
    itertag = "item"
    namespaces = [("dc", "http://purl.org/dc/elements/1.1/")]

    def __init__(self, base_url="http://127.0.0.1:8000", *args, **kwargs):
        super().__init__(*args, **kwargs)
        self.start_urls = [f"{base_url}/feeds/quotes.xml"]

    def parse_node(self, response, node):
        yield {
            "creator": node.xpath("dc:creator/text()").get(),
            "guid": node.xpath("guid/text()").get(),
        }
