"""Scrapy's ``scrapy.extensions.feedexport`` storage classes, for storages of a project's
own (``FEED_STORAGES``) written on top of them.

The common way to write a storage for Scrapy is to subclass ``BlockingFeedStorage``
and implement ``_store_in_thread(file)``: the feed is written to a temporary file
(in ``FEED_TEMPDIR``), then that method uploads it in a worker thread. skitter runs
such a class as it is (``skitter.pipelines``' FEED_STORAGES adapter already calls
``store`` in a thread, so ``store`` here does the work and returns None rather than a
Twisted Deferred). ``FileFeedStorage`` and ``StdoutFeedStorage`` are Scrapy's two
simplest storages, for subclasses and tests; skitter's own feeds write local files and
stdout themselves.
"""

from __future__ import annotations

import logging
import sys
import tempfile
from pathlib import Path
from typing import IO, Any
from urllib.parse import unquote, urlsplit

from skitter.settings import FeedSettings

__all__ = ["BlockingFeedStorage", "FileFeedStorage", "StdoutFeedStorage"]

_logger = logging.getLogger("skitter.extensions.feedexport")


class BlockingFeedStorage:
    """A storage that uploads a finished temporary file from a worker thread."""

    def open(self, spider: Any) -> IO[bytes]:
        """A temporary file in FEED_TEMPDIR (else the system's), removed when closed."""
        crawler = getattr(spider, "crawler", None)
        folder = crawler.settings.view(FeedSettings).feed_tempdir if crawler is not None else None
        folder = folder or tempfile.gettempdir()
        if not Path(folder).is_dir():
            raise OSError(f"Not a Directory: {folder}")
        return tempfile.NamedTemporaryFile(prefix="feed-", dir=folder)

    def store(self, file: IO[bytes]) -> None:
        self._store_in_thread(file)

    def _store_in_thread(self, file: IO[bytes]) -> None:
        raise NotImplementedError


def _local_path(uri: str) -> Path:
    if uri.startswith("file://"):
        return Path(unquote(urlsplit(uri).path))
    return Path(uri)


class FileFeedStorage:
    """A local file, appended to unless the feed overwrites."""

    def __init__(self, uri: str, *, feed_options: dict[str, Any] | None = None) -> None:
        self.path = str(_local_path(uri))
        overwrite = bool((feed_options or {}).get("overwrite", False))
        self.write_mode = "wb" if overwrite else "ab"

    def open(self, spider: Any) -> IO[bytes]:
        path = Path(self.path)
        path.parent.mkdir(parents=True, exist_ok=True)
        return path.open(self.write_mode)

    def store(self, file: IO[bytes]) -> None:
        file.close()


class StdoutFeedStorage:
    """Standard output, which cannot be overwritten (a warning says so if asked)."""

    def __init__(
        self,
        uri: str,
        _stdout: IO[bytes] | None = None,
        *,
        feed_options: dict[str, Any] | None = None,
    ) -> None:
        self._stdout = _stdout if _stdout is not None else sys.stdout.buffer
        if (feed_options or {}).get("overwrite"):
            _logger.warning(
                "Standard output (stdout) storage does not support overwriting. To suppress "
                "this warning, remove the overwrite option from your FEEDS setting, or set "
                "it to False."
            )

    def open(self, spider: Any) -> IO[bytes]:
        return self._stdout

    def store(self, file: IO[bytes]) -> None:
        return None
