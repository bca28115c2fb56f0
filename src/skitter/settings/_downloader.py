"""The downloader: the transport's limits and the built-in downloader middlewares'
switches (``DownloaderSettings`` is their frozen view).
"""

from __future__ import annotations

from skitter.settings._setting import KiB, MiB, Setting

__all__ = ["GROUP"]

GROUP: list[Setting] = [
    Setting(
        "DOWNLOAD_HANDLERS",
        {},
        dict,
        "Scrapy's per-scheme download handlers, merged over skitter's (http/https: "
        "DOWNLOAD_TRANSPORT; data/file: built in): None switches a scheme off, and "
        "scrapy-playwright's handler renders meta['playwright'] requests in the browser.",
    ),
    Setting("USER_AGENT", "skitter/0.1", str, "The User-Agent header of every request."),
    Setting(
        "DEFAULT_REQUEST_HEADERS",
        {
            "Accept": "text/html,application/xhtml+xml,application/xml;q=0.9,*/*;q=0.8",
            "Accept-Language": "en",
        },
        dict,
        "Headers added to requests that do not set them.",
    ),
    Setting("DOWNLOAD_TIMEOUT", 180.0, float, "Seconds a whole download may take."),
    Setting("DOWNLOAD_CONNECT_TIMEOUT", 30.0, float, "Seconds to open a connection."),
    Setting("DOWNLOAD_READ_TIMEOUT", 60.0, float, "Seconds without a byte from the server."),
    Setting(
        "DOWNLOAD_MAXSIZE",
        64 * MiB,
        int,
        "Largest body in bytes after decompression; larger ones are cut off and fail. 0 = no "
        "limit.",
    ),
    Setting("DOWNLOAD_WARNSIZE", 32 * MiB, int, "Log a warning for bodies above this size."),
    Setting(
        "DOWNLOAD_FAIL_ON_DATALOSS",
        True,
        bool,
        "A body that ends early fails (and is retried); False: passed on, flagged 'dataloss'.",
    ),
    Setting(
        "DOWNLOAD_MAX_HEADERS_SIZE",
        256 * KiB,
        int,
        "Largest total of a response's header names and values in bytes; larger responses "
        "fail, not retried. 0 = only aiohttp's limits (128 lines of at most 32 KiB).",
    ),
    Setting(
        "DOWNLOAD_TRANSPORT",
        "aiohttp",
        object,  # a name, or a transport factory (or its dotted path): ``_transports``
        "Who downloads: aiohttp (HTTP/1.1), httpx (HTTP/2, skitter[http2]), curl (a "
        "browser's TLS fingerprint, skitter[impersonate]) or browser, or a transport factory "
        "of your own (or its dotted path); meta['transport'] per request.",
    ),
    Setting(
        "DOWNLOAD_IMPERSONATE",
        "chrome",
        str,
        "The curl transport's browser profile (chrome, firefox, safari, edge, chrome131...); "
        "meta['impersonate'] per request.",
    ),
    Setting("COMPRESSION_ENABLED", True, bool, "Ask for and decode gzip, deflate, br and zstd."),
    Setting("COOKIES_ENABLED", True, bool, "Keep cookies per spider (and per meta cookiejar)."),
    Setting(
        "COOKIES_DEBUG",
        False,
        bool,
        "Log Cookie and Set-Cookie headers at DEBUG (values masked).",
    ),
    Setting(
        "COOKIES_PERSIST",
        True,
        bool,
        "Keep the cookie jars in the job directory (files 0600), so a resumed job stays logged in.",
    ),
    Setting("REDIRECT_ENABLED", True, bool, "Follow 301/302/303/307/308 redirects."),
    Setting(
        "METAREFRESH_ENABLED",
        True,
        bool,
        "Follow <meta http-equiv=refresh> and the Refresh header, as redirects.",
    ),
    Setting(
        "METAREFRESH_MAXDELAY", 100.0, float, "Refreshes with a longer delay are not followed."
    ),
    Setting(
        "METAREFRESH_IGNORE_TAGS",
        ["noscript"],
        list,
        "A meta refresh inside these tags is not followed.",
    ),
    Setting("REDIRECT_MAX_TIMES", 20, int, "Longest redirect chain followed."),
    Setting("REDIRECT_PRIORITY_ADJUST", 2, int, "Added to the priority of a redirected request."),
    Setting("RETRY_ENABLED", True, bool, "Retry network errors and RETRY_HTTP_CODES."),
    Setting("RETRY_TIMES", 3, int, "Retries after the first attempt."),
    Setting(
        "RETRY_GIVE_UP_LOG_LEVEL",
        "ERROR",
        object,
        "The level of the 'Gave up retrying' line (a level name, or its number).",
    ),
    Setting(
        "RETRY_HTTP_CODES",
        [408, 429, 500, 502, 503, 504, 522, 524],
        list,
        "Statuses that count as a failed, retryable attempt.",
    ),
    Setting(
        "RETRY_EXCEPTIONS",
        [],
        list,
        "Download errors that are retried: exception classes or dotted paths (Scrapy's "
        "Twisted names read as skitter's errors); empty = every network error and timeout.",
    ),
    Setting(
        "RETRY_DELAYS",
        [0.5, 2.0, 8.0],
        list,
        "Seconds before retry n (the last repeats) in `crawl` mode; a Retry-After header "
        "that asks for longer wins.",
    ),
    Setting("HTTPPROXY_ENABLED", True, bool, "Honour meta['proxy'] and *_proxy variables."),
    Setting("ROBOTSTXT_OBEY", False, bool, "Fetch robots.txt per host and obey it."),
    Setting(
        "ROBOTSTXT_PARSER",
        "skitter.robotstxt.ProtegoRobotParser",
        object,
        "The robots.txt parser (a class or its path) with Scrapy's interface: "
        "from_crawler(crawler, robotstxt_body) and allowed(url, user_agent).",
    ),
    Setting(
        "ROBOTSTXT_USER_AGENT", "", str, "User agent to match in robots.txt (default USER_AGENT)."
    ),
]
