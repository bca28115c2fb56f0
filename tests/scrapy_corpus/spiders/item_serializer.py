"""Field metadata the feed exporters read: a serializer declared in the Field."""

import scrapy


def comma_separated(tags):
    return ",".join(tags)


class TaggedQuote(scrapy.Item):
    text = scrapy.Field()
    tags = scrapy.Field(serializer=comma_separated)


class SerializerSpider(scrapy.Spider):
    name = "serializer"

    def __init__(self, base_url="http://127.0.0.1:8000", *args, **kwargs):
        super().__init__(*args, **kwargs)
        self.start_urls = [f"{base_url}/page/1/"]

    def parse(self, response):
        for quote in response.css("div.quote"):
            yield TaggedQuote(
                text=quote.css("span.text::text").get(),
                tags=quote.css("a.tag::text").getall(),
            )
