"""Scrapy's ``scrapy.settings.default_settings``: every known setting's default, as a
module attribute (``default_settings.CONCURRENT_REQUESTS``).

Made from the registry, so it cannot drift from what a crawl actually uses. Scrapy's
settings that skitter refuses are not here: their defaults mean nothing to skitter.
"""

from __future__ import annotations

from typing import Any

from skitter.settings._registry import SETTINGS


def _defaults() -> dict[str, Any]:
    return {name: setting.default for name, setting in SETTINGS.items()}


globals().update(_defaults())
__all__ = sorted(SETTINGS)
