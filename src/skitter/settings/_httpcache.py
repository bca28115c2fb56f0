"""The HTTP cache (``skitter.extensions.httpcache``): Scrapy's HTTPCACHE_* names, defaults
and meanings; the storages and policies are named by skitter's paths, Scrapy's paths or
the short names ``filesystem`` / ``sqlite`` and ``dummy`` / ``rfc2616``.
"""

from __future__ import annotations

from skitter.settings._setting import Setting

__all__ = ["GROUP"]

GROUP: list[Setting] = [
    Setting(
        "HTTPCACHE_ENABLED",
        False,
        bool,
        "Keep every response in a cache and answer from it (HttpCacheMiddleware).",
    ),
    Setting(
        "HTTPCACHE_DIR",
        "httpcache",
        str,
        "Where the cache lives; a relative path is inside the job directory when there is "
        "one, else inside `.skitter/` of the current directory.",
    ),
    Setting(
        "HTTPCACHE_EXPIRATION_SECS",
        0,
        int,
        "Seconds a cached response is used; older ones are fetched again. 0 = never expire.",
    ),
    Setting(
        "HTTPCACHE_IGNORE_HTTP_CODES",
        [],
        list,
        "Statuses never stored (DummyPolicy).",
    ),
    Setting(
        "HTTPCACHE_IGNORE_MISSING",
        False,
        bool,
        "Drop (IgnoreRequest) a request that is not in the cache instead of downloading it.",
    ),
    Setting(
        "HTTPCACHE_IGNORE_SCHEMES",
        ["file"],
        list,
        "URL schemes never cached.",
    ),
    Setting(
        "HTTPCACHE_ALWAYS_STORE",
        False,
        bool,
        "RFC2616Policy: store every response, even one without validators or freshness "
        "(a later request revalidates it).",
    ),
    Setting(
        "HTTPCACHE_IGNORE_RESPONSE_CACHE_CONTROLS",
        [],
        list,
        "RFC2616Policy: Cache-Control directives of responses to ignore (e.g. `no-cache`).",
    ),
    Setting(
        "HTTPCACHE_POLICY",
        "skitter.extensions.httpcache.DummyPolicy",
        object,  # a name, a dotted path or a class
        "What is cached and when it is fresh: `dummy` (everything, always) or `rfc2616` "
        "(HTTP caching rules, revalidation); or a dotted path.",
    ),
    Setting(
        "HTTPCACHE_STORAGE",
        "skitter.extensions.httpcache.FilesystemCacheStorage",
        object,  # a name, a dotted path or a class
        "Where entries are kept: `filesystem` (a file per response), `sqlite` (one database "
        "per spider) or `dbm` (Scrapy's DBM storage); or a dotted path.",
    ),
    Setting(
        "RECRAWL_CONDITIONAL",
        True,
        bool,
        "A task recrawled by `age` or `auto_recrawl` sends its last ETag / Last-Modified; a "
        "304 counts as unchanged (recrawl/unchanged) and runs no callback unless the spider "
        "handles 304.",
    ),
    Setting(
        "HTTPCACHE_DBM_MODULE",
        "dbm",
        str,
        "The module `dbm` storage opens its databases with (`dbm`, `dbm.gnu`, ...).",
    ),
    Setting(
        "HTTPCACHE_STORE_SECRETS",
        False,
        bool,
        "Store in cache entries the headers that carry credentials or a session (Set-Cookie, "
        "...) and a URL's user:password; off, they are left out. Cookies of a response "
        "served from the cache never go into the cookie jar either way.",
    ),
    Setting(
        "HTTPCACHE_GZIP",
        False,
        bool,
        "Compress cached entries with gzip.",
    ),
]
