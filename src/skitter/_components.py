"""Building ordered component lists (middlewares, pipelines) from settings, Scrapy-style.

A component is named by a class, an instance or a dotted path; ``{name: order}`` dicts
are merged over the built-ins, ``None`` switches a built-in off (a path set to None that
cannot be imported switches nothing off, with a warning: Scrapy's built-ins skitter
lacks, such as its telnet console, are switched off in many ported settings), and lower
orders come first. A class is built as Scrapy builds it: through ``from_crawler(crawler)``
if it has one, so a component can read settings, report stats and connect signals; else
``from_settings(settings)``; else with no argument. A component may raise
``NotConfigured`` from any of these to take itself out (for instance when its
``*_ENABLED`` setting is off); that is logged at DEBUG level.
"""

from __future__ import annotations

import contextlib
import functools
import importlib
import importlib.util
import inspect
import logging
from collections.abc import Callable, Mapping
from typing import TYPE_CHECKING, Any

from skitter._types import CrawlContext
from skitter.exceptions import ConfigError, NotConfigured

if TYPE_CHECKING:
    from skitter.settings import Settings

__all__ = [
    "SPIDERMON_EXTENSION",
    "build_component",
    "build_components",
    "load_object",
    "merge_components",
    "named_components",
    "spider_optional",
    "spidermon_installed",
]

#: The settings that name components, as {path or class: order}, and as one path.
_COMPONENT_MAPS = (
    "DOWNLOADER_MIDDLEWARES",
    "SPIDER_MIDDLEWARES",
    "EXTENSIONS",
    "ITEM_PIPELINES",
    "SPIDER_CONTRACTS",
    "MONITORS",  # {monitor: level}, or a list of monitors
)
_COMPONENT_PATHS = (
    "DNS_RESOLVER",
    "HTTPCACHE_STORAGE",
    "HTTPCACHE_POLICY",
    "MONITOR_HISTORY",
    "TRACING_EXPORTER",
    "LOG_FORMATTER",
)
#: Registries {name: component}: their values are the components.
_COMPONENT_TABLES = ("FEED_EXPORTERS", "FEED_STORAGES")

log = logging.getLogger("skitter.components")

SPIDERMON_EXTENSION = "spidermon.contrib.scrapy.extensions.Spidermon"

#: Spidermon's components, which skitter has built in: a ported project's ITEM_PIPELINES
#: and EXTENSIONS name them, and need not have Spidermon installed. Spidermon's extension
#: is skitter's only while Spidermon is not installed (``spidermon_installed``): the real
#: one runs a project's own monitor suites, which skitter's cannot.
_ALIASES = {
    "spidermon.contrib.scrapy.pipelines.ItemValidationPipeline": (
        "skitter.pipelines.SpidermonValidationPipeline"
    ),
    SPIDERMON_EXTENSION: "skitter.monitors.SpidermonExtension",
}


@functools.cache
def spidermon_installed() -> bool:
    """Whether Spidermon itself can be imported (then its own extension runs)."""
    return importlib.util.find_spec("spidermon") is not None


def load_object(path: Any) -> Any:
    """Import ``"package.module.Name"``; objects that are not strings pass through."""
    if not isinstance(path, str):
        return path
    if path != SPIDERMON_EXTENSION or not spidermon_installed():
        path = _ALIASES.get(path, path)
    module_name, _, attr = path.rpartition(".")
    if not module_name:
        raise ConfigError(f"{path!r} is not a dotted path to an object")
    try:
        module = importlib.import_module(module_name)
    except ImportError as exc:
        raise ConfigError(f"cannot import {module_name!r} for {path!r}: {exc}") from exc
    try:
        return getattr(module, attr)
    except AttributeError:
        raise ConfigError(f"module {module_name!r} has no {attr!r}") from None


def _key(spec: Any, order: int | None = 0) -> str:
    """One key per component, however it is named: a public re-export path, the private
    module path and the class itself all match the same built-in. A path switched off
    that cannot be imported is its own key: it switches nothing off."""
    try:
        obj = load_object(spec)
    except ConfigError:
        if order is not None:
            raise
        log.warning("%s is switched off, but there is no such component to switch off", spec)
        return str(spec)
    cls = obj if isinstance(obj, type) else type(obj)
    return f"{cls.__module__}.{cls.__qualname__}"


def build_component(obj: Any, crawler: CrawlContext) -> Any:
    """``obj`` itself, or the instance its class builds (see the module's docstring);
    ``NotConfigured`` goes on to the caller."""
    if not isinstance(obj, type):
        return obj
    from_crawler = getattr(obj, "from_crawler", None)
    if from_crawler is not None:
        built = from_crawler(crawler)
        how = "from_crawler"
    elif (from_settings := getattr(obj, "from_settings", None)) is not None:
        built = from_settings(crawler.settings)
        how = "from_settings"
    else:
        return obj()
    if built is None:
        raise ConfigError(f"{obj.__qualname__}.{how} returned None instead of an instance")
    return built


def merge_components(base: Mapping[Any, int | None], custom: Mapping[Any, int | None]) -> list[Any]:
    """The components ``custom`` merged over ``base``, loaded, lowest order first, those
    set to None left out (classes as they are: SPIDER_CONTRACTS builds its own)."""
    merged: dict[str, tuple[Any, int | None]] = {_key(k): (k, v) for k, v in base.items()}
    for spec, order in custom.items():
        merged[_key(spec, order)] = (spec, order)
    ordered = sorted(
        ((spec, order) for spec, order in merged.values() if order is not None),
        key=lambda pair: pair[1],
    )
    return [load_object(spec) for spec, _order in ordered]


def build_components(
    base: Mapping[Any, int | None], custom: Mapping[Any, int | None], crawler: CrawlContext
) -> list[Any]:
    """Instances of the merged components in order, skipping those not configured."""
    out = []
    for obj in merge_components(base, custom):
        try:
            out.append(build_component(obj, crawler))
        except NotConfigured as exc:
            name = getattr(obj, "__qualname__", obj)
            log.debug("Not using %s (NotConfigured): %s", name, exc or "switched off")
    return out


def _scrapys(spec: Any) -> bool:
    """Whether ``spec`` is Scrapy's path of a built-in, which skitter maps to its own
    (nothing to load: Scrapy need not be installed)."""
    return isinstance(spec, str) and spec.partition(".")[0] == "scrapy"


def _entries(named: Any) -> list[tuple[Any, Any]]:
    """A components setting's (component, order) pairs (MONITORS may be a list)."""
    if isinstance(named, Mapping):
        return list(named.items())
    return [(spec, 0) for spec in named] if isinstance(named, list | tuple) else []


def named_components(settings: Settings) -> list[Any]:
    """The classes (or objects) the settings name as components, loaded but not built:
    what the settings check asks which settings they read. One that cannot be loaded is
    left out: building it fails later with its own message. A one-path setting left at
    its default names a built-in whose settings skitter declares: it is not loaded, so
    that a crawl without the HTTP cache never imports the cache's storages."""
    specs = [
        spec
        for name in _COMPONENT_MAPS
        for spec, order in _entries(settings[name])
        if order is not None and not _scrapys(spec)
    ]
    specs += [
        spec
        for name in _COMPONENT_TABLES
        for spec in (settings[name] or {}).values()
        if spec is not None and not _scrapys(spec)
    ]
    specs += [
        settings[name]
        for name in _COMPONENT_PATHS
        if settings.source(name) != "default"  # skitter's own: what it reads is declared
        and not _scrapys(settings[name])
        and "." in str(settings[name])
    ]
    out = []
    for spec in specs:
        with contextlib.suppress(ConfigError):
            out.append(load_object(spec))
    return out


def _takes(fn: Callable[..., Any], count: int) -> bool:
    """Whether ``fn`` can be called with ``count`` positional arguments (True when its
    signature cannot be read: the call then goes on as it always did)."""
    try:
        parameters = inspect.signature(fn).parameters.values()
    except (TypeError, ValueError):
        return True
    positional = (inspect.Parameter.POSITIONAL_ONLY, inspect.Parameter.POSITIONAL_OR_KEYWORD)
    if any(p.kind is inspect.Parameter.VAR_POSITIONAL for p in parameters):
        return True
    return sum(p.kind in positional for p in parameters) >= count


def spider_optional(hook: Callable[..., Any], arguments: int) -> Callable[..., Any]:
    """``hook`` callable with ``arguments`` arguments then the spider, as skitter calls
    a middleware's hooks: the hook itself when it takes the spider, else a wrapper that
    leaves the spider out. Scrapy 2.13 made the ``spider`` argument of middleware hooks
    optional (and deprecated it), so middlewares written for it define
    ``process_request(self, request)``; calling those with the spider would be a
    TypeError. Decided once per crawl, when the chain is composed."""
    if _takes(hook, arguments + 1):
        return hook

    def without_spider(*args: Any) -> Any:
        return hook(*args[:arguments])

    return without_spider
