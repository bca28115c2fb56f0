"""scrapy-fieldstats, as its README sets it up."""

import scrapy_fieldstats.fieldstats  # noqa: F401  (loads?)
from _common import ProductSpider, base_settings

Spider = ProductSpider  # the runner's name for the spider to run


def settings():
    return base_settings(
        EXTENSIONS={"scrapy_fieldstats.fieldstats.FieldStatsExtension": 10},
        FIELDSTATS_ENABLED=True,
    )
