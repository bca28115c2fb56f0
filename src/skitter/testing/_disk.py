"""A disk that fills up, for testing what a crawl does when its feed cannot be written.

A real full disk is hard to make on demand (root ignores permissions, a tmpfs needs a
mount), so ``FullDisk`` stands in at the file level, below Python's buffering: feed
files opened on it are ordinary files whose raw writes are cut short once a file would
grow past ``limit`` bytes, and then fail with ``ENOSPC``, as a full file system does.
Everything above (the buffered writer, the exporter, the feed) is the real code.
"""

from __future__ import annotations

import errno
import io
import os
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import IO, Any

__all__ = ["FullDisk"]


class FullDisk:
    """Files that may not grow past ``limit`` bytes (``None``: no limit, the disk was
    freed). ``buffer_size`` is the buffered writer's, smaller than a feed's own 64 KiB
    to make a write (not only a flush) reach the disk."""

    def __init__(self, limit: int | None, *, buffer_size: int = 1 << 16) -> None:
        self.limit = limit
        self.buffer_size = buffer_size
        #: How many writes were refused.
        self.refused = 0

    def open(self, path: str | os.PathLike[str], mode: str) -> IO[bytes]:
        raw = _LimitedFile(self, path, mode.replace("b", ""))
        if "+" in mode:
            return io.BufferedRandom(raw, self.buffer_size)
        return io.BufferedWriter(raw, self.buffer_size)

    @contextmanager
    def feeds(self) -> Iterator[FullDisk]:
        """Open every feed file on this disk while the block runs."""
        from skitter.pipelines import FeedExporter

        def opener(feed: FeedExporter, path: Path, mode: str) -> IO[bytes]:
            return self.open(path, mode)

        original = FeedExporter._open_file
        FeedExporter._open_file = opener  # type: ignore[method-assign, assignment]  # a patch
        try:
            yield self
        finally:
            FeedExporter._open_file = original  # type: ignore[method-assign]


class _LimitedFile(io.FileIO):
    def __init__(self, disk: FullDisk, path: str | os.PathLike[str], mode: str) -> None:
        super().__init__(path, mode)
        self._disk = disk

    def write(self, data: Any) -> int:
        limit = self._disk.limit
        if limit is not None:
            room = limit - self.tell()
            if room <= 0:
                self._disk.refused += 1
                raise OSError(errno.ENOSPC, os.strerror(errno.ENOSPC))
            if len(data) > room:
                return super().write(memoryview(data)[:room])  # a short write, as when full
        return super().write(data)
