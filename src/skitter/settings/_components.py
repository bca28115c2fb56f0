"""Components named by settings: middlewares, pipelines, feeds."""

from __future__ import annotations

from skitter.settings._setting import Setting

__all__ = ["GROUP"]

GROUP: list[Setting] = [
    Setting(
        "ADDONS",
        {},
        dict,
        "Scrapy add-ons {path or class: order}: each updates the settings (at the 'addon' "
        "priority, below the project's) when the crawler is made; None switches one off.",
    ),
    Setting(
        "DUPEFILTER_CLASS",
        None,
        object,
        "A Scrapy duplicate filter (class or path; BaseDupeFilter's API), asked about each "
        "request before the frontier merges it by taskid; one per process. None = the "
        "frontier's merge alone.",
    ),
    Setting(
        "DUPEFILTER_DEBUG",
        False,
        bool,
        "RFPDupeFilter logs every duplicate it drops, not only the first.",
    ),
    Setting(
        "REQUEST_FINGERPRINTER_CLASS",
        "skitter.utils.request.RequestFingerprinter",
        object,
        "The class (or path) of crawler.request_fingerprinter. Another class than this "
        "default also makes the taskids: the frontier merges, and the job directory and "
        "Redis keep, requests by its fingerprint (hex) unless they name a taskid.",
    ),
    Setting(
        "DOWNLOADER_MIDDLEWARES",
        {},
        dict,
        "Extra downloader middlewares {path or class: order}; None disables a built-in.",
    ),
    Setting(
        "SPIDER_MIDDLEWARES",
        {},
        dict,
        "Extra spider middlewares {path or class: order}; None disables a built-in.",
    ),
    Setting(
        "SPIDER_MIDDLEWARES_BASE",
        None,
        dict,
        "The built-in spider middlewares {path or class: order} that SPIDER_MIDDLEWARES "
        "is merged over, as in Scrapy: None = skitter's (HttpError, Offsite, Referer, "
        "UrlLength, Depth); a dict replaces them ({} runs none but the project's).",
    ),
    Setting(
        "EXTENSIONS",
        {},
        dict,
        "Extensions {path or class: order}, built at start through from_crawler; "
        "None switches one off.",
    ),
    Setting(
        "SPIDER_CONTRACTS",
        {},
        dict,
        "Extra spider contracts for skitter check {path or class: order}; None disables "
        "a built-in.",
    ),
    Setting(
        "SPIDER_CONTRACTS_BASE",
        {
            "skitter.contracts.default.UrlContract": 1,
            "skitter.contracts.default.CallbackKeywordArgumentsContract": 1,
            "skitter.contracts.default.MetadataContract": 1,
            "skitter.contracts.default.ReturnsContract": 2,
            "skitter.contracts.default.ScrapesContract": 3,
        },
        dict,
        "The built-in contracts (@url, @cb_kwargs, @meta, @returns, @scrapes); SPIDER_CONTRACTS "
        "is merged over them.",
    ),
    Setting("ITEM_PIPELINES", {}, dict, "Item pipelines {path or class: order}, low first."),
    Setting(
        "FEEDS",
        {},
        dict,
        "Feed exports {uri: {'format': 'jsonl'|'json'|'csv'|'xml', ...}}; files, stdout:, "
        "s3://, ftp:// (see Feed exports).",
    ),
    Setting(
        "FEED_EXPORT_ENCODING",
        None,
        str,
        "Encoding of every feed that sets none in its FEEDS options; None = UTF-8.",
    ),
]
