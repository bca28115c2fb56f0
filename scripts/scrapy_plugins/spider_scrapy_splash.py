"""scrapy-splash, with every setting its README gives; SPLASH_URL is the site's fake Splash."""

from _common import SITE, ProductSpider, base_settings, product
from scrapy_splash import SplashRequest


class Spider(ProductSpider):
    def parse(self, response):
        for href in response.css("a::attr(href)").getall():
            yield SplashRequest(response.urljoin(href), self.parse_product, args={"wait": 0.5})

    def parse_product(self, response):
        yield product(response)


def settings():
    return base_settings(
        SPLASH_URL=SITE,
        DOWNLOADER_MIDDLEWARES={
            "scrapy_splash.SplashCookiesMiddleware": 723,
            "scrapy_splash.SplashMiddleware": 725,
            "scrapy.downloadermiddlewares.httpcompression.HttpCompressionMiddleware": 810,
        },
        SPIDER_MIDDLEWARES={"scrapy_splash.SplashDeduplicateArgsMiddleware": 100},
        DUPEFILTER_CLASS="scrapy_splash.SplashAwareDupeFilter",
        HTTPCACHE_STORAGE="scrapy_splash.SplashAwareFSCacheStorage",
    )
