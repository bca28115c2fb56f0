"""Scrapy's ``scrapy.pipelines.files`` path: the files pipeline and its stores."""

from skitter.pipelines._files import FilesPipeline
from skitter.pipelines._media import FileException
from skitter.pipelines._media_store import FSFilesStore, S3FilesStore

__all__ = ["FSFilesStore", "FileException", "FilesPipeline", "S3FilesStore"]
