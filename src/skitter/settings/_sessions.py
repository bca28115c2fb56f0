"""Session pools and proxy pools: what a crawl shows a site that blocks crawlers.

Read by ``downloader/middlewares/_sessions.py`` (SessionMiddleware), ``_proxypool.py``
(ProxyPoolMiddleware) and ``_blocks.py`` (what counts as a block, for both).
"""

from __future__ import annotations

from skitter.settings._setting import Setting

__all__ = ["GROUP"]

GROUP: list[Setting] = [
    Setting(
        "SESSION_POOL_SIZE",
        0,
        int,
        "Sessions (each a cookie jar, a proxy and a fingerprint) per scope; a blocked "
        "session is retired and the request retried on a fresh one; 0 = no sessions.",
    ),
    Setting(
        "SESSION_POOL_SCOPE",
        "slot",
        str,
        "`slot`: a pool per download slot (host); `project`: one pool for the spider.",
    ),
    Setting(
        "SESSION_MAX_USES",
        50,
        int,
        "Requests a session makes before it is retired (0 = no limit).",
    ),
    Setting(
        "SESSION_MAX_BLOCK_RETRIES",
        10,
        int,
        "Fresh sessions one request tries after blocks before its task fails.",
    ),
    Setting(
        "SESSION_FINGERPRINTS",
        [],
        list,
        "Browser profiles for meta['impersonate'], one per session in turn; empty = none.",
    ),
    Setting(
        "BLOCK_STATUSES",
        [401, 403, 429],
        list,
        "Statuses that mean a block when the body has a BLOCK_MARKERS text (or always, "
        "if BLOCK_MARKERS is empty).",
    ),
    Setting(
        "BLOCK_MARKERS",
        [
            "access denied",
            "banned",
            "blocked",
            "too many requests",
            "rate limit",
            "unusual traffic",
        ],
        list,
        "Texts (any case) that make a BLOCK_STATUSES response a block.",
    ),
    Setting(
        "CAPTCHA_MARKERS",
        ["g-recaptcha", "h-captcha", "cf-turnstile", "px-captcha", "captcha-delivery"],
        list,
        "Texts (any case) that make a response of any status a block (a CAPTCHA page).",
    ),
    Setting(
        "PROXY_LIST",
        None,
        object,
        "Proxy URLs: a list, a list of lists (tiers), a file (one URL a line) or a dotted "
        "path to a callable returning either; None = no proxy pool.",
        scrapy="ROTATING_PROXY_LIST (scrapy-rotating-proxies)",
    ),
    Setting(
        "PROXY_CREDENTIALS",
        None,
        object,
        "Proxy URLs with their credentials (`http://user:pass@host:port`; a list, a file "
        "or comma-separated, as PROXY_LIST) that stored requests get back: a request's "
        "meta['proxy'] is stored without its password; see Sessions and proxy pools.",
    ),
    Setting(
        "PROXY_ROTATION",
        "round_robin",
        str,
        "`round_robin`, or `tiered`: a host escalates to the next tier on blocks and "
        "errors, and probes the tier below after PROXY_TIER_FALLBACK successes.",
    ),
    Setting(
        "PROXY_BACKOFF",
        60.0,
        float,
        "Seconds a proxy is left out after a connection error or timeout through it.",
    ),
    Setting(
        "PROXY_TIER_FALLBACK",
        20,
        int,
        "Successes in a row at a tier after which a host tries the tier below.",
    ),
]
