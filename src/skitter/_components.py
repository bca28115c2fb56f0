"""Building ordered component lists (middlewares, pipelines) from settings, Scrapy-style.

A component is named by a class, an instance or a dotted path; ``{name: order}`` dicts
are merged over the built-ins, ``None`` switches a built-in off, and lower orders come
first. A class with ``from_crawler(crawler)`` is built through it (Scrapy's hook), so a
component can read settings and report stats; anything else is called with no argument.
A component may raise ``NotConfigured`` from its constructor to take itself out (for
instance when its ``*_ENABLED`` setting is off).
"""

from __future__ import annotations

import importlib
from collections.abc import Mapping
from typing import Any

from skitter._types import CrawlContext
from skitter.exceptions import ConfigError, NotConfigured

__all__ = ["build_components", "load_object"]


def load_object(path: Any) -> Any:
    """Import ``"package.module.Name"``; objects that are not strings pass through."""
    if not isinstance(path, str):
        return path
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


def _key(spec: Any) -> str:
    """One key per component, however it is named: a public re-export path, the private
    module path and the class itself all match the same built-in."""
    obj = load_object(spec)
    cls = obj if isinstance(obj, type) else type(obj)
    return f"{cls.__module__}.{cls.__qualname__}"


def build_components(
    base: Mapping[Any, int | None], custom: Mapping[Any, int | None], crawler: CrawlContext
) -> list[Any]:
    """Instances of the merged components in order, skipping those not configured."""
    merged: dict[str, tuple[Any, int | None]] = {_key(k): (k, v) for k, v in base.items()}
    for spec, order in custom.items():
        merged[_key(spec)] = (spec, order)
    ordered = sorted(
        ((spec, order) for spec, order in merged.values() if order is not None),
        key=lambda pair: pair[1],
    )
    out = []
    for spec, _order in ordered:
        obj = load_object(spec)
        try:
            if isinstance(obj, type):
                factory = getattr(obj, "from_crawler", None)
                obj = factory(crawler) if factory is not None else obj()
        except NotConfigured:
            continue
        out.append(obj)
    return out
