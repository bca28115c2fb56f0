"""Scrapy's add-ons (``ADDONS``): components that configure the crawl's settings.

An add-on is a class (or its dotted path) in ``ADDONS = {addon: order}``; each, lowest
order first, is built with ``from_crawler`` when it has one and its
``update_settings(settings)`` called while the crawler's settings can still change
(``settings.set(name, value, "addon")``: the add-on's priority, below the project's, so
a project's own value wins). An add-on that raises ``NotConfigured`` is left out (logged
with its reason). ``update_pre_crawler_settings(settings)``, a classmethod, is called
too when the add-on has one. The crawler does this when it is made, before its settings
are checked, so the names and components an add-on sets are checked like any others.
"""

from __future__ import annotations

import logging
from typing import Any

from skitter._components import load_object
from skitter.exceptions import NotConfigured
from skitter.settings import BaseSettings
from skitter.utils.misc import build_from_crawler

__all__ = ["AddonManager"]

logger = logging.getLogger(__name__)


def _ordered(addons: Any) -> list[Any]:
    """The add-ons of an ADDONS dict, lowest order first; None switches one off."""
    entries = dict(addons or {})
    return [
        addon
        for addon, order in sorted(entries.items(), key=lambda e: e[1] or 0)
        if order is not None
    ]


class AddonManager:
    """The add-ons of one crawler (``crawler.addons``), in the order they were applied."""

    def __init__(self, crawler: Any) -> None:
        self.crawler = crawler
        self.addons: list[Any] = []

    @classmethod
    def for_crawler(cls, crawler: Any) -> AddonManager:
        """The manager of ``crawler``, its add-ons applied to ``crawler.settings``."""
        manager = cls(crawler)
        manager.load_settings(crawler.settings)
        return manager

    def load_settings(self, settings: BaseSettings) -> None:
        """Build each add-on the ``ADDONS`` setting names and let it update ``settings``."""
        for path in _ordered(settings.get("ADDONS")):
            try:
                addoncls = load_object(path)
                self.load_pre_crawler_settings_of(addoncls, settings)
                addon = build_from_crawler(addoncls, self.crawler)
                if hasattr(addon, "update_settings"):
                    addon.update_settings(settings)
                self.addons.append(addon)
            except NotConfigured as exc:
                if exc.args:
                    logger.warning(
                        "Disabled %(clspath)s: %(eargs)s",
                        {"clspath": path, "eargs": exc.args[0]},
                        extra={"crawler": self.crawler},
                    )
        if self.addons:
            logger.info(
                "Enabled addons:\n%(addons)s",
                {"addons": self.addons},
                extra={"crawler": self.crawler},
            )

    @staticmethod
    def load_pre_crawler_settings_of(addoncls: Any, settings: BaseSettings) -> None:
        hook = getattr(addoncls, "update_pre_crawler_settings", None)
        if hook is not None:
            hook(settings)

    @classmethod
    def load_pre_crawler_settings(cls, settings: BaseSettings) -> None:
        """Scrapy's hook run before any crawler exists: each add-on's classmethod."""
        for path in _ordered(settings.get("ADDONS")):
            cls.load_pre_crawler_settings_of(load_object(path), settings)
