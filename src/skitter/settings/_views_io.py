"""Typed views of the downloader's optional parts: sessions, proxies and block
detection, the HTTP cache, name resolution.

Field types follow the declarations (``_sessions``, ``_httpcache``, ``_network``); a
test keeps the two in step. Each view is built once per resolved Settings.
"""

from __future__ import annotations

import dataclasses
from typing import Any

from skitter.settings._views import View

__all__ = ["HttpCacheSettings", "NetworkSettings", "SessionSettings"]


@dataclasses.dataclass(frozen=True, slots=True)
class SessionSettings(View):
    """The session pool, the proxy pool, and what both count as a block."""

    session_pool_scope: str
    session_pool_size: int
    session_fingerprints: tuple[Any, ...]
    session_max_uses: int
    session_max_block_retries: int
    proxy_rotation: str
    proxy_list: Any  # URLs, tiers of URLs, or a file
    proxy_backoff: float
    proxy_tier_fallback: int
    block_statuses: tuple[int, ...]
    block_markers: tuple[Any, ...]
    captcha_markers: tuple[Any, ...]


@dataclasses.dataclass(frozen=True, slots=True)
class HttpCacheSettings(View):
    """The HTTP cache middleware, its policy and its storage."""

    httpcache_enabled: bool
    httpcache_policy: Any  # a class or its dotted path
    httpcache_storage: Any  # a class or its dotted path
    httpcache_ignore_missing: bool
    httpcache_store_secrets: bool
    httpcache_ignore_http_codes: tuple[int, ...]
    httpcache_ignore_schemes: tuple[str, ...]
    httpcache_always_store: bool
    httpcache_ignore_response_cache_controls: tuple[str, ...]
    httpcache_dir: str
    httpcache_expiration_secs: int
    httpcache_gzip: bool
    httpcache_dbm_module: str
    jobdir: str  # a relative HTTPCACHE_DIR is kept in the job directory


@dataclasses.dataclass(frozen=True, slots=True)
class NetworkSettings(View):
    """Name resolution: the resolver, its timeout and its cache."""

    dns_resolver: Any  # a class or its dotted path
    dns_timeout: float
    dnscache_enabled: bool
    dnscache_size: int
