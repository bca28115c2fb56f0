"""Scrapy's ``scrapy.extensions.feedexport`` storage classes, for FEED_STORAGES classes
written on them; see ``_feedexport``.
"""

from skitter.extensions._feedexport import (
    BlockingFeedStorage,
    FileFeedStorage,
    StdoutFeedStorage,
)
from skitter.extensions._feedexport_remote import FTPFeedStorage, GCSFeedStorage, S3FeedStorage

__all__ = [
    "BlockingFeedStorage",
    "FTPFeedStorage",
    "FileFeedStorage",
    "GCSFeedStorage",
    "S3FeedStorage",
    "StdoutFeedStorage",
]
