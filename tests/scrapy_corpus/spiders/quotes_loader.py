"""Item loaders as Scrapy's documentation teaches them: processors in Field metadata and
on the loader class, default_item_class, add_css/add_xpath/add_value, selector= for a
quote block and response= for an author page."""

import scrapy
from itemloaders.processors import Identity, Join, MapCompose, TakeFirst
from scrapy.loader import ItemLoader


def remove_quotes(text):
    return text.strip("\u201c\u201d")


class QuoteItem(scrapy.Item):
    text = scrapy.Field(input_processor=MapCompose(str.strip, remove_quotes))
    author = scrapy.Field()
    tags = scrapy.Field(output_processor=Identity())
    url = scrapy.Field()


class AuthorItem(scrapy.Item):
    name = scrapy.Field(input_processor=MapCompose(str.strip))
    born = scrapy.Field(output_processor=Join(" "))


class QuoteLoader(ItemLoader):
    default_item_class = QuoteItem
    default_output_processor = TakeFirst()


class LoaderSpider(scrapy.Spider):
    name = "loader"

    def __init__(self, base_url="http://127.0.0.1:8000", *args, **kwargs):
        super().__init__(*args, **kwargs)
        self.start_urls = [f"{base_url}/"]

    def parse(self, response):
        for quote in response.css("div.quote"):
            loader = QuoteLoader(selector=quote)
            loader.add_css("text", "span.text::text")
            loader.add_xpath("author", ".//small[@class='author']/text()")
            loader.add_css("tags", "a.tag::text")
            loader.add_value("url", response.url)
            yield loader.load_item()
        yield from response.follow_all(css=".author + a", callback=self.parse_author)
        yield from response.follow_all(css="li.next a", callback=self.parse)

    def parse_author(self, response):
        loader = ItemLoader(item=AuthorItem(), response=response)
        loader.default_output_processor = TakeFirst()
        loader.add_css("name", "h3.author-title::text")
        loader.add_css("born", ".author-born-date::text")
        loader.add_css("born", ".author-born-location::text")
        yield loader.load_item()
