"""XPath all the way: .re_first() for the id, the keywords <meta> for the tags, an
attribute selector handed to response.follow."""

import scrapy


class XPathSpider(scrapy.Spider):
    name = "xpath"
    base_url = "http://127.0.0.1:8000"

    async def start(self):
        yield scrapy.Request(self.base_url + "/page/1/")

    def parse(self, response):
        for quote in response.xpath('//div[@class="quote"]'):
            keywords = quote.xpath('.//meta[@class="keywords"]/@content').get()
            yield {
                "id": int(quote.xpath('./a[@class="permalink"]/@href').re_first(r"/quote/(\d+)/")),
                "text": quote.xpath('./span[@class="text"]/text()').re_first(r"^\u201c(.*)\u201d$"),
                "author": quote.xpath('.//small[@class="author"]/text()').get(),
                "keywords": keywords.split(",") if keywords else [],
            }
        for href in response.xpath('//li[@class="next"]/a/@href'):
            yield response.follow(href, self.parse)
