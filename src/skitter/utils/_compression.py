"""Scrapy's ``scrapy.utils._compression``: whole-body decompressors with a size cap, for
Scrapy's ``HttpCompressionMiddleware`` path and ``scrapy.utils.gz``.

skitter's transports decode bodies as they arrive (``skitter.downloader``'s decoder, strict:
a cut stream is an error). These helpers serve code that holds a whole body still encoded
(a response built by hand, a cached or stored page) and follow Scrapy's contract for it:
``max_size`` (``0``: none) is checked after every piece of at most ``_CHUNK_SIZE`` bytes,
so a bomb stops a piece past the cap, and a body cut short gives what could be decoded.
"""

from __future__ import annotations

import sys
import zlib
from io import BytesIO

import brotli

if sys.version_info >= (3, 14):
    from compression import zstd
else:  # the same module, backported
    from backports import zstd

__all__ = [
    "_CHUNK_SIZE",
    "_DecompressionMaxSizeExceeded",
    "_check_max_size",
    "_inflate",
    "_unbrotli",
    "_unzstd",
]

_CHUNK_SIZE = 64 * 1024
"""Largest output of one decompressor call, and so the overshoot past ``max_size``."""


class _DecompressionMaxSizeExceeded(ValueError):
    """The decoded body grew past ``max_size``; ``decompressed_size`` is how far it got."""

    def __init__(self, decompressed_size: int, max_size: int) -> None:
        super().__init__(decompressed_size, max_size)
        self.decompressed_size = decompressed_size
        self.max_size = max_size

    def __str__(self) -> str:
        return (
            f"The number of bytes decompressed so far ({self.decompressed_size} B) "
            f"exceeded the specified maximum ({self.max_size} B)."
        )


def _check_max_size(decompressed_size: int, max_size: int) -> None:
    """Raise once ``decompressed_size`` is over a set (non-zero) ``max_size``."""
    if max_size and decompressed_size > max_size:
        raise _DecompressionMaxSizeExceeded(decompressed_size, max_size)


class _Sink:
    """The output so far and its size, checked against the cap at every piece."""

    def __init__(self, max_size: int) -> None:
        self.buffer = BytesIO()
        self.size = 0
        self.max_size = max_size

    def add(self, piece: bytes) -> None:
        self.size += len(piece)
        _check_max_size(self.size, self.max_size)
        self.buffer.write(piece)


def _inflate(data: bytes, *, max_size: int = 0) -> bytes:
    """Undo ``deflate``: zlib-wrapped as the RFC says, or raw as some servers send it.

    Bytes after the end of the stream are ignored; a cut stream gives what it held.
    """
    wbits = zlib.MAX_WBITS
    try:
        zlib.decompressobj(wbits).decompress(data[:2])
    except zlib.error:
        wbits = -zlib.MAX_WBITS  # no zlib header: raw deflate
    decompressor = zlib.decompressobj(wbits)
    sink = _Sink(max_size)
    pending = data
    while pending and not decompressor.eof:
        sink.add(decompressor.decompress(pending, _CHUNK_SIZE))
        # Input the call could not turn into output waits in unconsumed_tail; what
        # follows the end of the stream (unused_data) is never fed back.
        pending = decompressor.unconsumed_tail
    return sink.buffer.getvalue()


def _unbrotli(data: bytes, *, max_size: int = 0) -> bytes:
    """Undo ``br``; a cut stream gives what it held."""
    decompressor = brotli.Decompressor()
    sink = _Sink(max_size)
    piece = decompressor.process(data, output_buffer_limit=_CHUNK_SIZE)
    sink.add(piece)
    while piece and not decompressor.is_finished():
        piece = decompressor.process(b"", output_buffer_limit=_CHUNK_SIZE)
        sink.add(piece)
    return sink.buffer.getvalue()


def _unzstd(data: bytes, *, max_size: int = 0) -> bytes:
    """Undo ``zstd`` (several frames too); a cut frame gives what came out before it."""
    sink = _Sink(max_size)
    with zstd.ZstdFile(BytesIO(data)) as reader:
        while True:
            try:
                piece = reader.read(_CHUNK_SIZE)
            except EOFError:  # the last frame is cut short
                break
            if not piece:
                break
            sink.add(piece)
    return sink.buffer.getvalue()
