"""scrapy-user-agents, as its README sets it up."""

import scrapy_user_agents.middlewares  # noqa: F401  (loads?)
from _common import ProductSpider, base_settings

Spider = ProductSpider  # the runner's name for the spider to run


def settings():
    return base_settings(DOWNLOADER_MIDDLEWARES={
        "scrapy.downloadermiddlewares.useragent.UserAgentMiddleware": None,
        "scrapy_user_agents.middlewares.RandomUserAgentMiddleware": 400,
    })
