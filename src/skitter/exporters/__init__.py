"""Scrapy's item exporter API (``scrapy.exporters``): ``BaseItemExporter`` and its
eight exporters, for a project's own feed formats (FEED_EXPORTERS); see ``_exporters``.
"""

from skitter.exporters._exporters import (
    BaseItemExporter,
    CsvItemExporter,
    JsonItemExporter,
    JsonLinesItemExporter,
    MarshalItemExporter,
    PickleItemExporter,
    PprintItemExporter,
    PythonItemExporter,
    XmlItemExporter,
)

__all__ = [
    "BaseItemExporter",
    "CsvItemExporter",
    "JsonItemExporter",
    "JsonLinesItemExporter",
    "MarshalItemExporter",
    "PickleItemExporter",
    "PprintItemExporter",
    "PythonItemExporter",
    "XmlItemExporter",
]
