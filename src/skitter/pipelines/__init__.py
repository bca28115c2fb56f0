"""Item pipelines and feed exports."""

from skitter.pipelines._base import ItemPipeline
from skitter.pipelines._exporters import (
    CsvExporter,
    ItemExporter,
    JsonExporter,
    JsonLinesExporter,
)
from skitter.pipelines._feed_options import FEED_FORMATS, FeedOptions, parse_feeds
from skitter.pipelines._feeds import FeedExporter
from skitter.pipelines._manager import ItemPipelineManager

__all__ = [
    "FEED_FORMATS",
    "CsvExporter",
    "FeedExporter",
    "FeedOptions",
    "ItemExporter",
    "ItemPipeline",
    "ItemPipelineManager",
    "JsonExporter",
    "JsonLinesExporter",
    "parse_feeds",
]
