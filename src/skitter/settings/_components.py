"""Components named by settings: middlewares, pipelines, feeds."""

from __future__ import annotations

from skitter.settings._setting import Setting

__all__ = ["GROUP"]

GROUP: list[Setting] = [
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
        "EXTENSIONS",
        {},
        dict,
        "Extensions {path or class: order}, built at start through from_crawler; "
        "None switches one off.",
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
