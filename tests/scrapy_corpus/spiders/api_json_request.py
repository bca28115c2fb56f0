"""JsonRequest: POST a JSON body to the search API, one tag at a time, page after page."""

import scrapy
from scrapy.http import JsonRequest


class JsonSearchSpider(scrapy.Spider):
    name = "json_search"
    base_url = "http://127.0.0.1:8000"

    async def start(self):
        yield JsonRequest(f"{self.base_url}/api/quotes?page=1", callback=self.parse_tags)

    def parse_tags(self, response):
        for tag in response.json()["top_ten_tags"]:
            yield JsonRequest(
                f"{self.base_url}/api/search", data={"tag": tag, "page": 1}, cb_kwargs={"tag": tag}
            )

    def parse(self, response, tag):
        data = response.json()
        for quote in data["quotes"]:
            yield {"tag": tag, "text": quote["text"], "page": data["page"]}
        if data["has_next"]:
            yield JsonRequest(
                f"{self.base_url}/api/search",
                data={"tag": tag, "page": data["page"] + 1},
                cb_kwargs={"tag": tag},
            )
