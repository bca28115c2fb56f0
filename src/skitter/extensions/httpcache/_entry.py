"""One cached response as bytes, shared by every storage: a torn entry reads as corrupt.

Layout: a magic line, one line of JSON (URL, status, headers, when it was stored, and
the body's length and CRC-32), then the body; with HTTPCACHE_GZIP the whole is gzipped
(gzip's own CRC and length cover it). Reading checks the magic, the JSON, the length
and the checksum, so an entry cut short by a crash, overwritten by a stray process or
damaged on disk is ``CorruptEntry``, which the middleware counts as a miss, and never a
response with half a body. The storages write an entry in one step (a rename, a
transaction), so a reader sees the old entry or the new one whole; the checks are for
what no write discipline prevents.
"""

from __future__ import annotations

import gzip
import zlib
from typing import Any

import orjson
from multidict import CIMultiDict

from skitter.http import Request, Response, response_class

__all__ = ["STORED_AT", "CorruptEntry", "Entry", "decode_entry", "encode_entry"]

#: ``request.meta`` key under which a read entry leaves the time it was stored: the RFC
#: 2616 policy ages an entry whose response has no ``Date`` from it (RFC 9110 §6.6.1:
#: a cache records when it received such a response), while the headers stay exactly
#: the ones the server sent.
STORED_AT = "_httpcache_stored_at"

MAGIC = b"skitter-httpcache 1\n"
_GZIP_MAGIC = b"\x1f\x8b"


class CorruptEntry(Exception):
    """A stored entry that cannot be read back whole; the middleware treats it as a miss
    (``httpcache/corrupt``) and stores the fresh response over it."""


class Entry:
    """A decoded entry: the response (for the request that asked) and when it was stored."""

    __slots__ = ("response", "stored")

    def __init__(self, response: Response, stored: float) -> None:
        self.response = response
        self.stored = stored


def encode_entry(response: Response, stored: float, use_gzip: bool) -> bytes:
    """``response`` as an entry stored at ``stored`` (epoch seconds), its headers as
    sent (the time it was stored is kept beside them, see ``STORED_AT``)."""
    headers = [[name, value] for name, value in response.header_items()]
    body = response.body
    meta = {
        "url": response.url,
        "status": response.status,
        "headers": headers,
        "stored": stored,
        "length": len(body),
        "crc32": zlib.crc32(body),
    }
    data = b"".join((MAGIC, orjson.dumps(meta), b"\n", body))
    return gzip.compress(data, compresslevel=5, mtime=0) if use_gzip else data


def decode_entry(data: bytes, request: Request) -> Entry:
    """The entry in ``data``, answering ``request``; ``CorruptEntry`` unless it is whole.
    The time it was stored goes in ``request.meta[STORED_AT]``, for the policy."""
    if data[:2] == _GZIP_MAGIC:
        try:
            data = gzip.decompress(data)
        except (OSError, EOFError, zlib.error) as exc:
            raise CorruptEntry(f"bad gzip data: {exc}") from None
    if not data.startswith(MAGIC):
        raise CorruptEntry("not a skitter cache entry")
    end = data.find(b"\n", len(MAGIC))
    if end < 0:
        raise CorruptEntry("cut short in its header")
    try:
        meta: dict[str, Any] = orjson.loads(data[len(MAGIC) : end])
        body = data[end + 1 :]
        if len(body) != meta["length"] or zlib.crc32(body) != meta["crc32"]:
            raise CorruptEntry(f"body of {len(body)} bytes does not match its header")
        url = str(meta["url"])
        headers = CIMultiDict((str(k), str(v)) for k, v in meta["headers"])
        # The class the transport would have picked (HtmlResponse, TextResponse, ...), so
        # a cached page answers the same calls as a downloaded one.
        response = response_class(headers, url, body)(
            url, int(meta["status"]), headers, body, request
        )
        stored = float(meta["stored"])
        request.meta[STORED_AT] = stored
        return Entry(response, stored)
    except CorruptEntry:
        raise
    except (orjson.JSONDecodeError, KeyError, TypeError, ValueError) as exc:
        raise CorruptEntry(f"unreadable header: {exc}") from None
