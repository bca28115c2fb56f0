"""Errbacks as Scrapy's documentation writes them: failure.check(HttpError),
failure.value.response, failure.request."""

import scrapy
from scrapy.spidermiddlewares.httperror import HttpError


class ErrbackSpider(scrapy.Spider):
    name = "errback"
    base_url = "http://127.0.0.1:8000"
    custom_settings = {"RETRY_TIMES": 1}

    async def start(self):
        for path in ("/quote/1/", "/status/404/", "/status/500/", "/status/410/"):
            yield scrapy.Request(
                self.base_url + path, callback=self.parse_quote, errback=self.errback_quote
            )

    def parse_quote(self, response):
        yield {"url": response.url, "ok": True}

    def errback_quote(self, failure):
        self.logger.info(repr(failure))
        if failure.check(HttpError):
            response = failure.value.response
            yield {"url": response.url, "ok": False, "status": response.status}
        else:
            yield {"url": failure.request.url, "ok": False, "error": repr(failure.value)}
