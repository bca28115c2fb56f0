"""Scrapy's ``scrapy.pipelines.files`` path: the files pipeline and its stores.

``FileException`` lives in ``scrapy.pipelines.media``; reading it here still works, with
Scrapy's deprecation warning.
"""

import warnings
from typing import Any

from skitter.exceptions import ScrapyDeprecationWarning as _Deprecated
from skitter.pipelines import _media, _media_store
from skitter.pipelines._files import FilesPipeline
from skitter.pipelines._media_ftp import FTPFilesStore, GCSFilesStore
from skitter.pipelines._media_store import FSFilesStore, S3FilesStore

__all__ = ["FSFilesStore", "FTPFilesStore", "FilesPipeline", "GCSFilesStore", "S3FilesStore"]

#: Scrapy's private name of the checksum helper, which its tests import.
_md5sum = _media_store.md5sum


def __getattr__(name: str) -> Any:
    if name == "FileException":
        warnings.warn(
            "scrapy.pipelines.files.FileException is deprecated: import it from "
            "scrapy.pipelines.media",
            _Deprecated,
            stacklevel=2,
        )
        return _media.FileException
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
