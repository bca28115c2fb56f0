"""The encoding of a response's body, and whether parsel may parse the bytes as they are."""

from __future__ import annotations

import codecs
from functools import lru_cache

from w3lib.encoding import resolve_encoding

__all__ = ["ASCII_ALIKE", "auto_detect", "parses_as_its_text", "text_encoding"]

#: Encodings that decode ASCII bytes as ASCII (w3lib's names for them: ``ascii`` and
#: ``latin-1`` resolve to cp1252).
ASCII_ALIKE = frozenset({"utf-8", "cp1252"})
#: ASCII bytes that ``str.strip`` strips and ``bytes.strip`` does not.
_STR_ONLY_SPACES = frozenset(b"\x1c\x1d\x1e\x1f")


def auto_detect(body: bytes) -> str:
    """Encoding for a body that declares none: UTF-8 if it decodes, else Windows-1252.

    Browsers fall back the same way; a statistical detector guesses wrong too often on
    short pages and costs more than the parse.
    """
    try:
        body.decode("utf-8")
    except UnicodeDecodeError:
        return "cp1252"
    return "utf-8"


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


def parses_as_its_text(body: bytes) -> bool:
    """Whether parsel builds the same tree from ``body`` as from its text, whatever
    ASCII-alike encoding decodes it: ASCII (so no BOM either), no NUL (parsel removes
    those before stripping bytes, after stripping text) and nothing at either end that
    ``str.strip`` strips and ``bytes.strip`` keeps. Decoding a page and encoding it
    again for lxml is a tenth of what building its selector costs."""
    if not body.isascii() or b"\x00" in body:
        return False
    core = body.strip()
    return bool(core) and core[0] not in _STR_ONLY_SPACES and core[-1] not in _STR_ONLY_SPACES
