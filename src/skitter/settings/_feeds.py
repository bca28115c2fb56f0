"""Feed exports beyond FEEDS itself: Scrapy's FEED_* defaults and the storages' settings."""

from __future__ import annotations

from skitter.settings._setting import Setting

__all__ = ["GROUP"]

GROUP: list[Setting] = [
    Setting(
        "FEED_EXPORT_FIELDS",
        None,
        list,
        "Fields (columns) of every feed that sets no 'fields'; None = all, in item order.",
    ),
    Setting(
        "FEED_EXPORT_INDENT",
        0,
        int,
        "Indentation of JSON and XML feeds that set no 'indent'; 0 = one item per line.",
    ),
    Setting(
        "FEED_STORE_EMPTY",
        True,
        bool,
        "Create a feed's file (or object) also when it gets no item; per feed: 'store_empty'.",
    ),
    Setting(
        "FEED_EXPORT_BATCH_ITEM_COUNT",
        0,
        int,
        "Start a new feed file every N items (the URI needs %(batch_id)d or %(batch_time)s); "
        "0 = one file. Per feed: 'batch_item_count'.",
    ),
    Setting(
        "FEED_URI_PARAMS",
        None,
        object,
        "A function (or its path) f(params, spider) -> dict of a feed URI's placeholders.",
    ),
    Setting(
        "FEED_TEMPDIR",
        None,
        str,
        "Folder for the staging files of remote and compressed feeds (without a job "
        "directory); None = the system's temporary folder.",
    ),
    Setting(
        "FEED_STORAGE_FTP_ACTIVE",
        False,
        bool,
        "Use active FTP (the server connects back) for ftp:// feeds instead of passive.",
    ),
    Setting(
        "FEED_STORAGE_S3_ACL", None, str, "Canned ACL of s3:// feed objects; None = the bucket's."
    ),
    Setting(
        "GCS_PROJECT_ID",
        None,
        str,
        "The Google Cloud project of the gs:// client, as in Scrapy (uploads into an "
        "existing bucket do not need it).",
    ),
    Setting(
        "FEED_EXPORTERS",
        {},
        dict,
        "Feed formats of your own, {format: exporter class or path}, merged over the "
        "built-in ones (None switches one off); exporters have Scrapy's API "
        "(skitter.exporters).",
    ),
    Setting(
        "FEED_STORAGES",
        {},
        dict,
        "Feed storages of your own, {URI scheme: storage class or path}, merged over the "
        "built-in ones (None switches one off); storages have Scrapy's API "
        "(open(spider), store(file)).",
    ),
    Setting(
        "FEED_URI",
        None,
        object,
        "Deprecated (as in Scrapy): one feed's URI, added to FEEDS with FEED_FORMAT, with "
        "a warning. None = no such feed.",
    ),
    Setting(
        "FEED_FORMAT",
        "jsonlines",
        str,
        "Deprecated (as in Scrapy): the format of FEED_URI's feed; read only with FEED_URI.",
    ),
]
