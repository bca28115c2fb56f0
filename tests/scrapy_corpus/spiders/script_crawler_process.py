"""Run from a script, as Scrapy's "Run Scrapy from a script" shows: CrawlerProcess with
its settings, crawl(), start(). ``python script_crawler_process.py BASE_URL`` writes
quotes.jsonl; imported, the file is just its spider."""

import sys

import scrapy
from scrapy.crawler import CrawlerProcess


class ScriptQuotesSpider(scrapy.Spider):
    name = "script_quotes"

    def __init__(self, base_url="http://127.0.0.1:8000", *args, **kwargs):
        super().__init__(*args, **kwargs)
        self.start_urls = [f"{base_url}/"]

    def parse(self, response):
        for quote in response.css("div.quote"):
            yield {"author": quote.css("small.author::text").get()}
        yield from response.follow_all(css="li.next a")


if __name__ == "__main__":
    process = CrawlerProcess(settings={"FEEDS": {"quotes.jsonl": {"format": "jsonlines"}}})
    process.crawl(ScriptQuotesSpider, base_url=sys.argv[1])
    process.start()
