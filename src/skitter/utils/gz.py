"""Scrapy's ``scrapy.utils.gz``: ``gunzip`` for a whole gzip body (several members too)
under a size cap, and ``gzip_magic_number`` (whether a response's body is gzip data).

As Scrapy's, ``gunzip`` is lenient with a damaged body that decoded to something (a
cut stream, a bad checksum): it returns what it got. A body that gives nothing raises.
"""

from __future__ import annotations

import struct
from gzip import GzipFile as _GzipFile
from io import BytesIO as _BytesIO
from typing import TYPE_CHECKING

from skitter.utils._compression import _CHUNK_SIZE, _check_max_size

if TYPE_CHECKING:
    from skitter.http import Response

__all__ = ["gunzip", "gzip_magic_number"]


def gunzip(data: bytes, *, max_size: int = 0) -> bytes:
    """The decompressed ``data``; ``max_size`` (``0``: none) caps it, checked per piece of
    ``_CHUNK_SIZE`` bytes (``_DecompressionMaxSizeExceeded`` past it)."""
    output = _BytesIO()
    size = 0
    with _GzipFile(fileobj=_BytesIO(data)) as reader:
        while True:
            try:
                piece = reader.read1(_CHUNK_SIZE)
            except (OSError, EOFError, struct.error):
                if size:  # damaged after some output: keep what came out
                    break
                raise
            if not piece:
                break
            size += len(piece)
            _check_max_size(size, max_size)
            output.write(piece)
    return output.getvalue()


def gzip_magic_number(response: Response) -> bool:
    """Whether the body starts with gzip's magic bytes and its deflate method byte."""
    return response.body[:3] == b"\x1f\x8b\x08"
