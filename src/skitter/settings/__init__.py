"""Settings: one registry of known names, resolved once per crawl in layers.

``Settings`` (``_settings``) is the resolved mapping (Scrapy's ``BaseSettings``, ``_base``,
with priorities, mutable until the crawl starts and freezes it) and how it is laid:
defaults < project < spider < environment < command line, the environment only when
the caller passes one (the CLI does). ``SETTINGS`` is the registry of known names,
assembled (``_registry``) from one module per subsystem: ``_engine``, ``_politeness``
(per-slot limits, the scheduler's), ``_scheduler``, ``_cluster`` (Redis workers),
``_downloader``, ``_spider``, ``_browser``, ``_components``, ``_output``. Scrapy's
settings skitter refuses are in ``_scrapy``; the spider attributes that stand for
settings (``download_delay`` ...) in ``_attributes``. ``DownloaderSettings`` and
``BrowserSettings`` are frozen views (``_views``) a subsystem gets with
``settings.view(...)``; the other subsystems' views are in ``_views_*`` (library code
reads its settings through them, never by name). ``_declared`` is the check a Crawler
runs at start: a name that neither the registry nor a component of the crawl reads
(found in its code by ``_scan``, or in its ``declared_settings``) is refused, with the
name meant (``_suggest``).
"""

from skitter.settings._base import (
    SETTINGS_PRIORITIES,
    BaseSettings,
    SettingsAttribute,
    get_settings_priority,
)
from skitter.settings._registry import SETTINGS
from skitter.settings._setting import Setting
from skitter.settings._settings import Settings
from skitter.settings._views import BrowserSettings, DownloaderSettings, View
from skitter.settings._views_crawl import (
    ClusterSettings,
    EngineSettings,
    PolitenessSettings,
    SchedulerSettings,
    SpiderSettings,
)
from skitter.settings._views_io import HttpCacheSettings, NetworkSettings, SessionSettings
from skitter.settings._views_items import AwsSettings, FeedSettings, ItemSettings, MediaSettings
from skitter.settings._views_ops import (
    AlertSettings,
    LogSettings,
    MonitorSettings,
    ProjectSettings,
    SpidermonSettings,
)

__all__ = [
    "SETTINGS",
    "SETTINGS_PRIORITIES",
    "AlertSettings",
    "AwsSettings",
    "BaseSettings",
    "BrowserSettings",
    "ClusterSettings",
    "DownloaderSettings",
    "EngineSettings",
    "FeedSettings",
    "HttpCacheSettings",
    "ItemSettings",
    "LogSettings",
    "MediaSettings",
    "MonitorSettings",
    "NetworkSettings",
    "PolitenessSettings",
    "ProjectSettings",
    "SchedulerSettings",
    "SessionSettings",
    "Setting",
    "Settings",
    "SettingsAttribute",
    "SpiderSettings",
    "SpidermonSettings",
    "View",
    "get_settings_priority",
]
