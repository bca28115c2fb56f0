"""handle_httpstatus_list: asks for pages past the last one and reads the 404s itself."""

import scrapy


class StatusSpider(scrapy.Spider):
    name = "status_404"
    base_url = "http://127.0.0.1:8000"
    handle_httpstatus_list = [404]

    async def start(self):
        for page in range(1, 11):
            yield scrapy.Request(f"{self.base_url}/page/{page}/", cb_kwargs={"page": page})

    def parse(self, response, page):
        if response.status == 404:
            yield {"page": page, "missing": True}
            return
        yield {"page": page, "quotes": len(response.css("div.quote"))}
