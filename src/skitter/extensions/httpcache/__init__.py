"""The HTTP cache's policies and storages (Scrapy's ``scrapy.extensions.httpcache``).

``HttpCacheMiddleware`` (``skitter.downloader``, HTTPCACHE_ENABLED) asks a policy
(``DummyPolicy``, ``RFC2616Policy``) what to cache and whether an entry is fresh, and a
storage (``FilesystemCacheStorage``, ``SqliteCacheStorage``, ``DbmCacheStorage``) for
the entries. All keep Scrapy's method names, so a project's own policy or storage ports
as it is; an entry that cannot be read back whole is ``CorruptEntry``.

Each name is imported on first use: ``HttpCacheMiddleware`` is loaded by every crawl
(it switches itself off), and a crawl without the cache never loads its storages, nor
``sqlite3`` and ``dbm``.
"""

import importlib
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from skitter.extensions.httpcache._config import (
        build,
        policy_class,
        storage_class,
    )
    from skitter.extensions.httpcache._entry import (
        CorruptEntry,
        decode_entry,
        encode_entry,
    )
    from skitter.extensions.httpcache._policy import (
        DummyPolicy,
        RFC2616Policy,
        parse_cache_control,
        parse_http_date,
    )
    from skitter.extensions.httpcache._storage import (
        DbmCacheStorage,
        FilesystemCacheStorage,
        SqliteCacheStorage,
        cache_dir,
    )

#: Where each public name lives, imported by ``__getattr__`` when first asked for.
_HOMES = {
    "build": "_config",
    "policy_class": "_config",
    "storage_class": "_config",
    "CorruptEntry": "_entry",
    "decode_entry": "_entry",
    "encode_entry": "_entry",
    "DummyPolicy": "_policy",
    "RFC2616Policy": "_policy",
    "parse_cache_control": "_policy",
    "parse_http_date": "_policy",
    "DbmCacheStorage": "_storage",
    "FilesystemCacheStorage": "_storage",
    "SqliteCacheStorage": "_storage",
    "cache_dir": "_storage",
}

__all__ = [
    "CorruptEntry",
    "DbmCacheStorage",
    "DummyPolicy",
    "FilesystemCacheStorage",
    "RFC2616Policy",
    "SqliteCacheStorage",
    "build",
    "cache_dir",
    "decode_entry",
    "encode_entry",
    "parse_cache_control",
    "parse_http_date",
    "policy_class",
    "storage_class",
]


def __getattr__(name: str) -> Any:
    home = _HOMES.get(name)
    if home is None:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    value = getattr(importlib.import_module(f"{__name__}.{home}"), name)
    globals()[name] = value  # once: later reads are plain module attributes
    return value
