"""The HTTP cache's policies and storages (Scrapy's ``scrapy.extensions.httpcache``).

``HttpCacheMiddleware`` (``skitter.downloader``, HTTPCACHE_ENABLED) asks a policy
(``DummyPolicy``, ``RFC2616Policy``) what to cache and whether an entry is fresh, and a
storage (``FilesystemCacheStorage``, ``SqliteCacheStorage``, ``DbmCacheStorage``) for
the entries. All keep Scrapy's method names, so a project's own policy or storage ports
as it is; an entry that cannot be read back whole is ``CorruptEntry``.
"""

from skitter.extensions.httpcache._config import build, policy_class, storage_class
from skitter.extensions.httpcache._entry import CorruptEntry, decode_entry, encode_entry
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
