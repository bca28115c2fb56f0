"""scrapy-proxies, as its README sets it up: a proxy list file, a random proxy per request."""

import os

import scrapy_proxies  # noqa: F401  (loads?)
from _common import PROXIES, WORK, ProductSpider, base_settings

Spider = ProductSpider  # the runner's name for the spider to run


def settings():
    path = os.path.join(WORK, "proxies.txt")
    with open(path, "w", encoding="utf-8") as out:
        out.write("\n".join(PROXIES) + "\n")
    return base_settings(
        RETRY_TIMES=2,
        RETRY_HTTP_CODES=[500, 503, 504, 400, 403, 404, 408],
        DOWNLOADER_MIDDLEWARES={
            "scrapy.downloadermiddlewares.retry.RetryMiddleware": 90,
            "scrapy_proxies.RandomProxy": 100,
            "scrapy.downloadermiddlewares.httpproxy.HttpProxyMiddleware": 110,
        },
        PROXY_LIST=path,
        PROXY_MODE=0,
    )
