"""Scrapy's spider attributes that stand for a setting, read as the spider's settings.

A Scrapy spider may say ``download_delay = 2`` or ``download_maxsize = 10_000`` on its
class instead of putting the setting in ``custom_settings``; Scrapy's components read
the attribute first. Ported spiders keep doing so, so each such attribute is laid into
the spider's layer of the settings, over ``custom_settings`` as in Scrapy. The command
line (``-s``) and the environment still come last: they are the operator's word on this
one run. ``skitter settings --get NAME`` shows where a value came from.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

__all__ = ["SPIDER_ATTRIBUTES", "spider_layer"]

#: A spider attribute -> the setting it stands for.
SPIDER_ATTRIBUTES: Mapping[str, str] = {
    "download_delay": "DOWNLOAD_DELAY",
    "download_timeout": "DOWNLOAD_TIMEOUT",
    "download_maxsize": "DOWNLOAD_MAXSIZE",
    "download_warnsize": "DOWNLOAD_WARNSIZE",
    "max_concurrent_requests": "CONCURRENT_REQUESTS_PER_DOMAIN",
}


def spider_layer(spidercls: type) -> Any:
    """The spider's own settings: its ``custom_settings``, then each attribute of
    ``SPIDER_ATTRIBUTES`` it sets (not None) over them. A ``custom_settings`` that is
    not a mapping is handed on as it is, for the settings to refuse by name."""
    custom = getattr(spidercls, "custom_settings", None)
    given = {
        setting: value
        for attribute, setting in SPIDER_ATTRIBUTES.items()
        if (value := getattr(spidercls, attribute, None)) is not None
    }
    if not given or (custom is not None and not isinstance(custom, Mapping)):
        return custom
    return {**(custom or {}), **given}
