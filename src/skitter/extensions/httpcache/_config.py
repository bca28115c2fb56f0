"""HTTPCACHE_POLICY and HTTPCACHE_STORAGE: the names a setting may give, and the
objects they stand for.

Accepted: the short names (``dummy``, ``rfc2616``; ``filesystem``, ``sqlite``, ``dbm``),
skitter's paths (``skitter.extensions.httpcache.DummyPolicy``), Scrapy's paths for the
same classes (a ported settings.py works unchanged), and any other dotted path or class
(a project's own policy or storage, with Scrapy's methods).
"""

from __future__ import annotations

from typing import Any

from skitter._components import load_object
from skitter.exceptions import ConfigError
from skitter.extensions.httpcache._policy import DummyPolicy, RFC2616Policy
from skitter.extensions.httpcache._storage import (
    DbmCacheStorage,
    FilesystemCacheStorage,
    SqliteCacheStorage,
)

__all__ = ["build", "policy_class", "storage_class"]

_POLICIES: dict[str, type] = {"dummy": DummyPolicy, "rfc2616": RFC2616Policy}
_STORAGES: dict[str, type] = {
    "filesystem": FilesystemCacheStorage,
    "sqlite": SqliteCacheStorage,
    "dbm": DbmCacheStorage,
}
_PREFIXES = ("skitter.extensions.httpcache.", "scrapy.extensions.httpcache.")


def _resolve(setting: str, value: Any, known: dict[str, type]) -> Any:
    if not isinstance(value, str):
        return value
    name = value.strip()
    if name.lower() in known:
        return known[name.lower()]
    for prefix in _PREFIXES:
        if name.startswith(prefix):
            attr = name[len(prefix) :]
            for cls in known.values():
                if cls.__name__ == attr:
                    return cls
            choices = ", ".join(sorted(known))
            raise ConfigError(f"{setting} = {value!r}: no such class; use one of {choices}")
    if "." not in name:
        choices = ", ".join(sorted(known))
        raise ConfigError(f"{setting} = {value!r}: use one of {choices}, or a dotted path")
    return load_object(name)


def policy_class(value: Any) -> Any:
    """The policy class HTTPCACHE_POLICY names."""
    return _resolve("HTTPCACHE_POLICY", value, _POLICIES)


def storage_class(value: Any) -> Any:
    """The storage class HTTPCACHE_STORAGE names."""
    return _resolve("HTTPCACHE_STORAGE", value, _STORAGES)


def build(cls: Any, crawler: Any) -> Any:
    """An instance of a policy or storage class: through ``from_crawler`` when it has
    one, else ``cls(settings)`` (Scrapy's constructor), an instance as it is."""
    if not isinstance(cls, type):
        return cls
    factory = getattr(cls, "from_crawler", None)
    if factory is not None:
        return factory(crawler)
    return cls(crawler.settings)
