"""The built-in spider middlewares: depth, URL length, Referer, which statuses reach
callbacks.
"""

from __future__ import annotations

from skitter.settings._setting import Setting

__all__ = ["GROUP"]

GROUP: list[Setting] = [
    Setting("DEPTH_LIMIT", 0, int, "Links deeper than this are dropped; 0 = no limit."),
    Setting(
        "DEPTH_PRIORITY",
        0,
        int,
        "Subtracted from a request's priority per level of depth (positive: breadth-first).",
    ),
    Setting(
        "DEPTH_STATS_VERBOSE",
        False,
        bool,
        "Count the requests kept at each depth (request_depth_count/<depth>).",
    ),
    Setting("URLLENGTH_LIMIT", 2083, int, "Requests with longer URLs are dropped; 0 = no limit."),
    Setting(
        "META_COPY_WARN_SKIP_KEYS",
        [],
        list,
        "Meta keys MetaCopyDetectionMiddleware does not warn about when a callback's request "
        "carries them (keys the downloader sets, copied from response.meta).",
    ),
    Setting("REFERER_ENABLED", True, bool, "Send the page a link was found on as Referer."),
    Setting(
        "REFERRER_POLICY",
        "scrapy-default",
        object,  # a name, an import path or a ReferrerPolicy subclass, as in Scrapy
        "The Referer rule: a W3C policy name (no-referrer, no-referrer-when-downgrade, "
        "same-origin, origin, strict-origin, origin-when-cross-origin, "
        "strict-origin-when-cross-origin, unsafe-url), scrapy-default, or a ReferrerPolicy "
        "subclass or its import path.",
    ),
    Setting(
        "REFERRER_POLICIES",
        {},
        dict,
        "More referrer policy names (name: import path), or None to remove a name.",
    ),
    Setting("HTTPERROR_ALLOWED_CODES", [], list, "Non-2xx statuses passed to callbacks."),
    Setting("HTTPERROR_ALLOW_ALL", False, bool, "Pass every status to callbacks."),
]
