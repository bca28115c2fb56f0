"""Scrapy's ``scrapy.extensions.feedexport``: the ``FeedExporter`` extension object with
its ``FeedSlot``, ``ItemFilter`` and ``apply_uri_params`` (see ``_feedslots``), and the
storage classes, for FEED_STORAGES classes written on them (see ``_feedexport``).
"""

from skitter.extensions._feedexport import (
    BlockingFeedStorage,
    FileFeedStorage,
    StdoutFeedStorage,
)
from skitter.extensions._feedexport_remote import FTPFeedStorage, GCSFeedStorage, S3FeedStorage
from skitter.extensions._feedslots import FeedExporter, FeedSlot, ItemFilter, apply_uri_params

__all__ = [
    "BlockingFeedStorage",
    "FTPFeedStorage",
    "FeedExporter",
    "FeedSlot",
    "FileFeedStorage",
    "GCSFeedStorage",
    "ItemFilter",
    "S3FeedStorage",
    "StdoutFeedStorage",
    "apply_uri_params",
]
