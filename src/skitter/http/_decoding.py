"""How a response's bytes become text: the names of encodings, the fallbacks."""

from __future__ import annotations

import codecs
from functools import lru_cache
from typing import TYPE_CHECKING

from w3lib.encoding import resolve_encoding

if TYPE_CHECKING:
    from skitter.http._response import Response

__all__ = ["auto_detect", "body_bytes", "text_encoding"]


def auto_detect(body: bytes, default: str) -> str:
    """Encoding for a body that declares none: ``default`` (the class's
    ``_DEFAULT_ENCODING``, UTF-8) if it decodes, else UTF-8, else Windows-1252.

    Browsers fall back the same way; a statistical detector guesses wrong too often on
    short pages and costs more than the parse.
    """
    for candidate in (default, "utf-8") if default != "utf-8" else ("utf-8",):
        try:
            body.decode(candidate)
        except (UnicodeDecodeError, LookupError):
            continue
        return text_encoding(candidate) or candidate
    return "cp1252"


@lru_cache(maxsize=256)
def text_encoding(name: str | None) -> str | None:
    """``name`` resolved as browsers do (w3lib), if it names a *text* encoding.

    Python also has codecs from bytes to bytes (base64, hex, zlib) and from str to str
    (rot13); a page that declares one of those, or a name nobody knows, has declared
    nothing usable, so the next source of the encoding is asked instead.
    """
    resolved = resolve_encoding(name) if name else None
    if resolved is None or not codecs.lookup(resolved)._is_text_encoding:
        return None
    return resolved


def body_bytes(body: object, encoding: str | None, response: Response) -> bytes:
    cls = type(response).__name__
    if body is None:
        return b""
    if isinstance(body, str):
        if encoding is None:
            raise TypeError(f"{cls}: a str body needs encoding= to be turned into bytes")
        given = text_encoding(encoding)
        if given is None:
            raise ValueError(f"{cls}(encoding={encoding!r}): not a known text encoding")
        return body.encode(given)
    if isinstance(body, bytes | bytearray | memoryview):
        return bytes(body)
    raise TypeError(f"{cls} body must be bytes or str, got {type(body).__name__}")
