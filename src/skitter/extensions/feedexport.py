"""Scrapy's ``scrapy.extensions.feedexport`` storage classes, for FEED_STORAGES classes
written on them; see ``_feedexport``.
"""

from skitter.extensions._feedexport import (
    BlockingFeedStorage,
    FileFeedStorage,
    StdoutFeedStorage,
)

__all__ = [
    "BlockingFeedStorage",
    "FileFeedStorage",
    "StdoutFeedStorage",
]
