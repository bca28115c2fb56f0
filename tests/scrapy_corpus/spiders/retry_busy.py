"""get_retry_request: a 200 that says "busy" is retried from the callback."""

import scrapy
from scrapy.downloadermiddlewares.retry import get_retry_request


class BusySpider(scrapy.Spider):
    name = "busy"
    base_url = "http://127.0.0.1:8000"

    async def start(self):
        for n in range(1, 6):
            yield scrapy.Request(f"{self.base_url}/flaky/{n}/")

    def parse(self, response):
        if response.css("p.busy"):
            new_request_or_none = get_retry_request(response.request, spider=self, reason="busy")
            if new_request_or_none:
                yield new_request_or_none
            return
        yield {
            "text": response.css("span.text::text").get(),
            "retries": response.meta.get("retry_times", 0),
        }
