"""A downloader middleware and a spider middleware of the project's own, given as classes
in custom_settings: the downloader middleware asks for the French author pages
(process_request returning a new Request), the spider middleware drops the quotes that
have no tag (a universal process_spider_output, sync and async, as Scrapy 2.13 advises)."""

import scrapy


class FrenchAuthorsMiddleware:
    def process_request(self, request, spider):
        if "/author/" in request.url and "lang=" not in request.url:
            return request.replace(url=request.url + "?lang=fr")
        return None


class TaggedOnlyMiddleware:
    def process_spider_output(self, response, result, spider):
        for obj in result:
            if not isinstance(obj, dict) or obj.get("tags", True):
                yield obj

    async def process_spider_output_async(self, response, result, spider):
        async for obj in result:
            if not isinstance(obj, dict) or obj.get("tags", True):
                yield obj


class MiddlewaresSpider(scrapy.Spider):
    name = "middlewares"
    custom_settings = {
        "DOWNLOADER_MIDDLEWARES": {FrenchAuthorsMiddleware: 543},
        "SPIDER_MIDDLEWARES": {TaggedOnlyMiddleware: 543},
    }

    def __init__(self, base_url="http://127.0.0.1:8000", *args, **kwargs):
        super().__init__(*args, **kwargs)
        self.start_urls = [f"{base_url}/"]

    def parse(self, response):
        for quote in response.css("div.quote"):
            yield {
                "text": quote.css("span.text::text").get(),
                "tags": quote.css("a.tag::text").getall(),
            }
        yield from response.follow_all(css=".author + a", callback=self.parse_author)
        yield from response.follow_all(css="li.next a")

    def parse_author(self, response):
        yield {
            "url": response.url,
            "lang": response.xpath("/html/@lang").get(),
            "born": response.xpath("//p/strong/text()").get(),
        }
