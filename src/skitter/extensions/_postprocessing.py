"""Feed post-processing plugins under Scrapy's import path (``postprocessing`` in FEEDS).

A plugin wraps the file a finished feed is stored into: ``Plugin(file, feed_options)``
with ``write(data) -> int`` and ``close()``, Scrapy's contract, so a user's own plugin
works too. skitter applies the chain when a feed (or a batch) is stored, not while items
are written: the feed is written plain to a local file first, which stays crash-safe and
can be cut back on a resume, and compressed once, whole.

Options come from the feed's options: ``gzip_compresslevel``, ``gzip_mtime``,
``gzip_filename``; ``bz2_compresslevel``; ``lzma_format``, ``lzma_check``,
``lzma_preset``, ``lzma_filters``; ``zstd_level`` (skitter's: Zstandard is not in Scrapy).
"""

from __future__ import annotations

import bz2
import gzip
import lzma
import sys
from collections.abc import Iterable, Mapping
from io import IOBase
from typing import IO, Any, Protocol

from skitter._components import load_object

if sys.version_info >= (3, 14):
    from compression import zstd
else:  # the same module, backported
    from backports import zstd

__all__ = ["Bz2Plugin", "GzipPlugin", "LZMAPlugin", "PostProcessingManager", "ZstdPlugin"]

#: The names a FEEDS entry may give for the built-ins, besides the dotted paths.
SHORT_NAMES = {"gzip": "GzipPlugin", "bz2": "Bz2Plugin", "lzma": "LZMAPlugin"}
SHORT_NAMES["zstd"] = "ZstdPlugin"


class _Stream(Protocol):
    def write(self, data: bytes, /) -> int: ...

    def close(self) -> None: ...


class PostProcessingManager(IOBase):
    """A file that writes through a chain of plugins into ``file`` (Scrapy's class).

    ``plugins`` (classes, or their dotted paths) apply first to last: the first gets
    the data written here, the last writes into ``file``. ``close()`` closes the chain,
    and with it ``file``; ``tell()`` is the position in ``file``."""

    def __init__(
        self, plugins: Iterable[Any], file: IO[bytes], feed_options: Mapping[str, Any]
    ) -> None:
        self.file = file
        head: Any = file
        for plugin in reversed(list(plugins)):
            head = load_object(plugin)(head, feed_options)
        self.head_plugin = head

    def write(self, data: bytes) -> int:
        return int(self.head_plugin.write(data))

    def tell(self) -> int:
        return self.file.tell()

    def writable(self) -> bool:
        return True

    def close(self) -> None:
        if not self.closed:
            self.head_plugin.close()
        super().close()


class _Plugin:
    """A compressor over ``file``; ``close()`` ends its stream and closes ``file``, so
    that the next plugin of a chain ends its own."""

    _stream: _Stream
    _file: IO[bytes]

    def write(self, data: bytes) -> int:
        return self._stream.write(data)

    def close(self) -> None:
        self._stream.close()
        self._file.close()


class GzipPlugin(_Plugin):
    """gzip (``gzip_compresslevel`` 9, ``gzip_mtime``, ``gzip_filename``)."""

    def __init__(self, file: IO[bytes], feed_options: Mapping[str, Any]) -> None:
        self._file = file
        self._stream = gzip.GzipFile(
            fileobj=file,
            mode="wb",
            compresslevel=feed_options.get("gzip_compresslevel", 9),
            mtime=feed_options.get("gzip_mtime"),
            filename=feed_options.get("gzip_filename"),
        )


class Bz2Plugin(_Plugin):
    """bzip2 (``bz2_compresslevel`` 9)."""

    def __init__(self, file: IO[bytes], feed_options: Mapping[str, Any]) -> None:
        self._file = file
        self._stream = bz2.BZ2File(
            file, mode="wb", compresslevel=feed_options.get("bz2_compresslevel", 9)
        )


class LZMAPlugin(_Plugin):
    """xz / lzma (``lzma_format``, ``lzma_check``, ``lzma_preset``, ``lzma_filters``)."""

    def __init__(self, file: IO[bytes], feed_options: Mapping[str, Any]) -> None:
        self._file = file
        self._stream = lzma.LZMAFile(  # noqa: SIM115 - closed by close()
            file,
            mode="wb",
            format=feed_options.get("lzma_format"),
            check=feed_options.get("lzma_check", -1),
            preset=feed_options.get("lzma_preset"),
            filters=feed_options.get("lzma_filters"),
        )


class ZstdPlugin(_Plugin):
    """Zstandard (``zstd_level``, the library's default 3)."""

    def __init__(self, file: IO[bytes], feed_options: Mapping[str, Any]) -> None:
        self._file = file
        self._stream = zstd.ZstdFile(file, mode="wb", level=feed_options.get("zstd_level"))
