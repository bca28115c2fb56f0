"""scrapy-playwright: the README's DOWNLOAD_HANDLERS and reactor; one page with
meta["playwright"], one without."""

import scrapy
from _common import SITE, base_settings


class Spider(scrapy.Spider):
    name = "js"

    def start_requests(self):
        yield scrapy.Request(SITE + "/js", meta={"playwright": True}, cb_kwargs={"plain": False})
        yield scrapy.Request(SITE + "/js?plain", cb_kwargs={"plain": True})

    def parse(self, response, plain):
        yield {
            "plain": plain,
            "static": response.css("#static::text").get(),
            "rendered": response.css("#rendered::text").get(),
        }


def settings():
    handler = "scrapy_playwright.handler.ScrapyPlaywrightDownloadHandler"
    return base_settings(
        DOWNLOAD_HANDLERS={"http": handler, "https": handler},
        TWISTED_REACTOR="twisted.internet.asyncioreactor.AsyncioSelectorReactor",
        PLAYWRIGHT_BROWSER_TYPE="chromium",
        PLAYWRIGHT_LAUNCH_OPTIONS={"headless": True, "executable_path": "/usr/bin/chromium"},
    )
