"""Scrapy's ``scrapy.pipelines.media`` path: the media pipeline base and its types."""

from skitter.pipelines._media import (
    FileException,
    FileInfo,
    FileInfoOrError,
    MediaPipeline,
)
from skitter.pipelines._media_chain import _MediaRequestFiltered

__all__ = ["FileException", "FileInfo", "FileInfoOrError", "MediaPipeline", "_MediaRequestFiltered"]
