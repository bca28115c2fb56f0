"""The registry of known settings: every subsystem's group, in one mapping.

Each group module (``_engine``, ``_politeness``, ``_scheduler``, ``_cluster``,
``_downloader``, ``_httpcache``, ``_network``, ``_spider``, ``_browser``, ``_components``,
``_feeds``, ``_items``, ``_media``, ``_aws``, ``_output``, ``_sessions``, ``_sinks``,
``_monitors``, ``_alerts``, ``_spidermon``) lists the settings of one subsystem; a name
is defined in exactly one of them (checked here at import). ``REFUSED`` are the
settings of Scrapy (``_scrapy``) and Spidermon (``_spidermon``) that skitter refuses;
``KNOWN_NAMES`` adds them, so that a typo of either is caught.
"""

from __future__ import annotations

from collections.abc import Mapping

from skitter.settings import (
    _alerts,
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
    _monitors,
    _network,
    _output,
    _politeness,
    _scheduler,
    _sessions,
    _sinks,
    _spider,
    _spidermon,
)
from skitter.settings._scrapy import UNSUPPORTED, Unsupported, scrapy_names
from skitter.settings._setting import Setting

__all__ = ["KNOWN_NAMES", "REFUSED", "SETTINGS", "scrapy_equivalent"]

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
    _monitors.GROUP,
    _alerts.GROUP,
    _spidermon.GROUP,
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
REFUSED: Mapping[str, Unsupported] = {**UNSUPPORTED, **_spidermon.REFUSED}
KNOWN_NAMES: tuple[str, ...] = (*SETTINGS, *REFUSED)


def scrapy_equivalent(setting: Setting) -> str | None:
    """The setting of the same meaning a Scrapy project would have set: the one the
    declaration names (another name, or an add-on's), the same name when it is one of
    Scrapy's (implemented with Scrapy's meaning, as every such name is), else None."""
    if setting.scrapy:
        return setting.scrapy
    return setting.name if setting.name in scrapy_names() else None
