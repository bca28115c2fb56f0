"""Retries steered per request: meta["max_retry_times"] and meta["dont_retry"], and
the errback once the retries are spent."""

import scrapy
from scrapy.spidermiddlewares.httperror import HttpError


class RetryMetaSpider(scrapy.Spider):
    name = "retry_meta"
    base_url = "http://127.0.0.1:8000"
    custom_settings = {"RETRY_TIMES": 2}

    async def start(self):
        cases = {"default": {}, "once": {"max_retry_times": 1}, "never": {"dont_retry": True}}
        for case, meta in cases.items():
            yield scrapy.Request(
                f"{self.base_url}/status/503/?case={case}",
                meta=meta,
                errback=self.gave_up,
                cb_kwargs={"case": case},
            )

    def parse(self, response, case):
        yield {"case": case, "status": response.status}

    def gave_up(self, failure):
        if failure.check(HttpError):
            request = failure.request
            yield {"case": request.cb_kwargs["case"], "status": failure.value.response.status}
