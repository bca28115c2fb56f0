"""scrapy-deltafetch, as its README sets it up; the runner runs it twice on one folder."""

import os

import scrapy_deltafetch  # noqa: F401  (loads?)
from _common import WORK, ProductSpider, base_settings

Spider = ProductSpider  # the runner's name for the spider to run


def settings():
    return base_settings(
        SPIDER_MIDDLEWARES={"scrapy_deltafetch.DeltaFetch": 100},
        DELTAFETCH_ENABLED=True,
        DELTAFETCH_DIR=os.path.join(WORK, "deltafetch"),
    )
