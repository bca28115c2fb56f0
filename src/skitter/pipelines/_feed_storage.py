"""Where a finished feed file goes: the ``FeedStorage`` seam and the local one.

A staged feed (remote, or compressed) is written to a local file first; once a batch or
the whole feed is finished, ``store(source, target)`` puts that file at ``target``. The
S3, GCS and FTP storages live in their own modules and are imported only when a feed uses
them, so that their libraries stay optional.
"""

from __future__ import annotations

import asyncio
import os
import shutil
from collections.abc import Mapping
from pathlib import Path
from typing import IO, Any, Protocol

from skitter.extensions.postprocessing import PostProcessingManager
from skitter.pipelines._exporters import ItemExporter
from skitter.pipelines._feed_options import FeedOptions
from skitter.pipelines._feed_registry import ScrapyExporter, ScrapyStorage

__all__ = ["FeedStorage", "LocalFeedStorage", "make_exporter", "make_storage", "postprocess"]


class FeedStorage(Protocol):
    """The contract of a feed storage.

    ``store(source, target)`` puts the whole local file ``source`` at ``target`` (a URI
    of the storage's scheme, credentials included), replacing what is there when the
    feed overwrites and appending otherwise (where the storage can); it returns only once
    the bytes are stored, and raises (any ``Exception``) when they are not: the caller
    retries, and keeps ``source`` until a call succeeds. Calls come one at a time.
    ``aclose()`` releases connections; called once, at the end."""

    name: str

    async def store(self, source: Path, target: str) -> None: ...

    async def aclose(self) -> None: ...


class LocalFeedStorage:
    """A compressed local feed: the file is copied into place whole (through a temporary
    file beside it, renamed), so that the target is never half written."""

    name = "FileFeedStorage"

    def __init__(self, options: FeedOptions, *, resumed: bool = False) -> None:
        self._options = options
        #: A resumed job stores again the batch its checkpoint was in, which the killed
        #: run may have stored already: then the file is its own, and is replaced.
        self._resumed = resumed

    async def store(self, source: Path, target: str) -> None:
        await asyncio.to_thread(self._store, source, self._options.local_path(target))

    def _store(self, source: Path, path: Path) -> None:
        path.parent.mkdir(parents=True, exist_ok=True)
        replace = self._options.overwrite or self._resumed
        if not replace and path.exists() and path.stat().st_size > 0:
            raise FileExistsError(
                f"{path} exists and a compressed feed cannot be continued; set "
                "'overwrite': True or move the file away"
            )
        part = path.with_name(path.name + ".part")
        shutil.copyfile(source, part)
        os.replace(part, path)

    async def aclose(self) -> None:
        return None


def make_storage(
    options: FeedOptions, settings: Mapping[str, Any], *, resumed: bool = False, spider: Any = None
) -> FeedStorage:
    """The storage of a staged feed (the scheme was checked, and its extra found, when
    FEEDS was parsed): FEED_STORAGES' own, or a built-in; ``resumed``: the feed
    continues a job."""
    if options.storage is not None:
        return ScrapyStorage(options.storage, options.raw, spider)
    if options.scheme == "s3":
        from skitter.pipelines._s3 import S3FeedStorage

        return S3FeedStorage(settings)
    if options.scheme == "gs":
        from skitter.pipelines._gcs import GcsFeedStorage

        return GcsFeedStorage(settings)
    if options.scheme == "ftp":
        from skitter.pipelines._ftp import FtpFeedStorage

        return FtpFeedStorage(
            active=bool(settings.get("FEED_STORAGE_FTP_ACTIVE", False)),
            overwrite=options.overwrite,
        )
    return LocalFeedStorage(options, resumed=resumed)


def make_exporter(options: FeedOptions, file: IO[bytes], crawler: Any = None) -> ItemExporter:
    """The feed's exporter on ``file``: a built-in, or FEED_EXPORTERS' own (Scrapy's API)
    behind an adapter, built from ``crawler`` if it has ``from_crawler``. Here rather
    than in the feed so the feed knows no registry."""
    cls = options.exporter
    if issubclass(cls, ItemExporter):
        return cls(file, encoding=options.encoding, fields=options.fields, indent=options.indent)
    return ScrapyExporter(
        file,
        exporter=cls,
        name=options.format,
        encoding=options.encoding,
        fields=options.fields,
        indent=options.indent,
        kwargs=options.raw.get("item_export_kwargs"),
        crawler=crawler,
    )


def postprocess(options: FeedOptions, source: Path) -> Path:
    """``source`` through the feed's post-processing plugins, into a file beside it (the
    source itself when there are none). Runs in a thread: compression takes a while."""
    if not options.postprocessing:
        return source
    out = source.with_name(source.name + ".out")
    with open(source, "rb") as reader, open(out, "wb") as file:
        chain = PostProcessingManager(options.postprocessing, file, options.raw)
        while chunk := reader.read(1 << 20):
            chain.write(chunk)
        chain.close()
    return out
