"""scrapy-rotating-proxies, as its README sets it up."""

import rotating_proxies.middlewares  # noqa: F401  (loads?)
from _common import PROXIES, ProductSpider, base_settings

Spider = ProductSpider  # the runner's name for the spider to run


def settings():
    return base_settings(
        ROTATING_PROXY_LIST=[p.removeprefix("http://") for p in PROXIES],
        DOWNLOADER_MIDDLEWARES={
            "rotating_proxies.middlewares.RotatingProxyMiddleware": 610,
            "rotating_proxies.middlewares.BanDetectionMiddleware": 620,
        },
    )
