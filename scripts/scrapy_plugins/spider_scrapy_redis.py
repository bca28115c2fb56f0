"""scrapy-redis: a RedisSpider takes its start URLs from a list on redis (REDIS_URL).

The README's SCHEDULER and DUPEFILTER_CLASS are left out: skitter's scheduler is its own
(its distributed mode is skitter's redis frontier), and it refuses to be replaced.
"""

import os

import redis
from _common import SITE, base_settings, product
from scrapy_redis.spiders import RedisSpider

REDIS_URL = os.environ.get("PLUGIN_REDIS_URL", "redis://127.0.0.1:6379/0")


class Spider(RedisSpider):
    name = "products"
    redis_key = "products:start_urls"

    def parse(self, response):
        yield product(response)


def settings():
    server = redis.Redis.from_url(REDIS_URL)
    server.delete(Spider.redis_key)
    server.lpush(Spider.redis_key, SITE + "/product/1", SITE + "/product/2")
    return base_settings(REDIS_URL=REDIS_URL, MAX_IDLE_TIME_BEFORE_CLOSE=1)
