"""scrapy-fake-useragent, as its README sets it up (no USER_AGENT: the last fallback)."""

import scrapy_fake_useragent.middleware  # noqa: F401  (loads?)
from _common import ProductSpider, base_settings

Spider = ProductSpider  # the runner's name for the spider to run


def settings():
    return base_settings(
        DOWNLOADER_MIDDLEWARES={
            "scrapy.downloadermiddlewares.useragent.UserAgentMiddleware": None,
            "scrapy.downloadermiddlewares.retry.RetryMiddleware": None,
            "scrapy_fake_useragent.middleware.RandomUserAgentMiddleware": 400,
            "scrapy_fake_useragent.middleware.RetryUserAgentMiddleware": 401,
        },
        FAKEUSERAGENT_PROVIDERS=[
            "scrapy_fake_useragent.providers.FakeUserAgentProvider",
            "scrapy_fake_useragent.providers.FakerProvider",
        ],
    )
