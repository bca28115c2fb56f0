"""Item pipelines, feed exports (files, stdout, S3, GCS, FTP), items sent to Redis,
sinks (databases and brokers, ``_sinks``), item validation and field coverage, and the
media pipelines' seam.

``FilesPipeline`` and ``ImagesPipeline`` live at Scrapy's paths,
``skitter.pipelines.files`` and ``skitter.pipelines.images``.
"""

from skitter.pipelines._base import ItemPipeline
from skitter.pipelines._coverage import coverage
from skitter.pipelines._exporters import (
    CsvExporter,
    ItemExporter,
    JsonExporter,
    JsonLinesExporter,
)
from skitter.pipelines._feed_options import FEED_FORMATS, FeedOptions, parse_feeds
from skitter.pipelines._feeds import FeedExporter
from skitter.pipelines._manager import ItemPipelineManager
from skitter.pipelines._media import MEDIA_META, MediaPending
from skitter.pipelines._more_exporters import MarshalExporter, PickleExporter, XmlExporter
from skitter.pipelines._redis import RedisPipeline
from skitter.pipelines._validation import (
    InvalidItem,
    ItemValidationPipeline,
    SpidermonValidationPipeline,
)

__all__ = [
    "FEED_FORMATS",
    "MEDIA_META",
    "CsvExporter",
    "FeedExporter",
    "FeedOptions",
    "InvalidItem",
    "ItemExporter",
    "ItemPipeline",
    "ItemPipelineManager",
    "ItemValidationPipeline",
    "JsonExporter",
    "JsonLinesExporter",
    "MarshalExporter",
    "MediaPending",
    "PickleExporter",
    "RedisPipeline",
    "SpidermonValidationPipeline",
    "XmlExporter",
    "coverage",
    "parse_feeds",
]
