"""The registry of known settings: every subsystem's group, in one mapping.

Each group module (``_engine``, ``_politeness``, ``_scheduler``, ``_cluster``,
``_downloader``, ``_httpcache``, ``_network``, ``_spider``, ``_browser``, ``_components``,
``_feeds``, ``_items``, ``_media``, ``_aws``, ``_output``, ``_sessions``, ``_sinks``) lists the
settings of one subsystem; a name is defined in exactly one of them (checked here at
import). ``KNOWN_NAMES`` adds Scrapy's settings skitter refuses (``_scrapy``), so that a
typo of either is caught.
"""

from __future__ import annotations

from collections.abc import Mapping

from skitter.settings import (
    _aws,
    _browser,
    _cluster,
    _components,
    _downloader,
    _engine,
    _feeds,
    _httpcache,
    _items,
    _media,
    _network,
    _output,
    _politeness,
    _scheduler,
    _sessions,
    _sinks,
    _spider,
)
from skitter.settings._scrapy import UNSUPPORTED
from skitter.settings._setting import Setting

__all__ = ["KNOWN_NAMES", "SETTINGS"]

_GROUPS = (
    _engine.GROUP,
    _politeness.GROUP,
    _scheduler.GROUP,
    _cluster.GROUP,
    _downloader.GROUP,
    _httpcache.GROUP,
    _spider.GROUP,
    _browser.GROUP,
    _components.GROUP,
    _feeds.GROUP,
    _aws.GROUP,
    _items.GROUP,
    _output.GROUP,
    _network.GROUP,
    _sessions.GROUP,
    _media.GROUP,
    _sinks.GROUP,
)


def _registry() -> dict[str, Setting]:
    out: dict[str, Setting] = {}
    for group in _GROUPS:
        for setting in group:
            if setting.name in out:
                raise RuntimeError(f"setting {setting.name} is defined twice")
            out[setting.name] = setting
    return out


SETTINGS: Mapping[str, Setting] = _registry()
KNOWN_NAMES: tuple[str, ...] = (*SETTINGS, *UNSUPPORTED)
