"""scrapy-fieldstats, as its README sets it up."""

import scrapy_fieldstats.fieldstats  # noqa: F401  (loads?)
from _common import ProductSpider as Spider  # noqa: F401
from _common import base_settings


def settings():
    return base_settings(
        EXTENSIONS={"scrapy_fieldstats.fieldstats.FieldStatsExtension": 10},
        FIELDSTATS_ENABLED=True,
    )
