"""Scrapy's ``scrapy.utils.test``: a crawler for a component's unit test."""

from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING, Any

from skitter.utils.spider import DefaultSpider

if TYPE_CHECKING:
    from skitter.crawler import Crawler
    from skitter.spider import Spider

__all__ = ["get_crawler"]


def get_crawler(
    spidercls: type[Spider] | None = None,
    settings_dict: Mapping[str, Any] | None = None,
    prevent_warnings: bool = True,
) -> Crawler:
    """A Crawler for ``spidercls`` (a plain default spider when None) with
    ``settings_dict`` as the project's settings, not started: its ``settings``,
    ``stats`` and ``signals`` are ready for a component's ``from_crawler``.
    ``prevent_warnings`` is accepted for Scrapy's signature; skitter has no warning
    about a default setting to silence."""
    # The composition root is above this module's layer: taken when called, so that
    # importing Scrapy's path for the helper does not build anything.
    from skitter.crawler import Crawler

    return Crawler(spidercls or DefaultSpider, settings=settings_dict)
