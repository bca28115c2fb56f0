"""How a response's bytes become text: the names of encodings, the fallbacks."""

from __future__ import annotations

import codecs
from functools import lru_cache
from typing import TYPE_CHECKING, ClassVar

from w3lib.encoding import (
    html_body_declared_encoding,
    http_content_type_encoding,
    read_bom,
    resolve_encoding,
    to_unicode,
)

if TYPE_CHECKING:
    from skitter.http._response import Response

__all__ = [
    "ASCII_ALIKE",
    "TextDecoding",
    "auto_detect",
    "body_bytes",
    "parses_as_its_text",
    "text_encoding",
]

#: Encodings that decode ASCII bytes as ASCII (w3lib's names for them: ``ascii`` and
#: ``latin-1`` resolve to cp1252).
ASCII_ALIKE = frozenset({"utf-8", "cp1252"})
#: ASCII bytes that ``str.strip`` strips and ``bytes.strip`` does not.
_STR_ONLY_SPACES = frozenset(b"\x1c\x1d\x1e\x1f")


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


class TextDecoding:
    """How a ``Response`` reads its body as text: the encoding given, else the BOM's,
    the Content-Type's, the body's own declaration, else a guess from the bytes (and
    Scrapy's private names for each step, which its tests and plug-ins call)."""

    if not TYPE_CHECKING:  # the Response's slots hold the fields below (mypy sees them)
        __slots__ = ()
    _DEFAULT_ENCODING: ClassVar[str]
    _body: bytes
    _encoding: str | None
    _inferred: str | None
    _text: str | None

    def header(self, name: str, default: str | None = None) -> str | None:
        raise NotImplementedError  # the Response's

    @property
    def encoding(self) -> str:
        """The body's encoding: ``encoding=`` if given, else the BOM, then the
        Content-Type charset, then a <meta> or XML declaration, then UTF-8 if the bytes
        are valid UTF-8, else Windows-1252. A declared charset that is not a text
        encoding (``base64``, ``rot13``, an unknown name) counts as not declared."""
        given = self._encoding
        if given is not None:
            return given
        if self._inferred is None:
            self._decode()
        assert self._inferred is not None
        return self._inferred

    @property
    def text(self) -> str:
        if self._text is None:
            self._decode()
        assert self._text is not None
        return self._text

    def _decode(self) -> None:
        body = self._body
        if self._encoding is not None:
            given = text_encoding(self._encoding)
            assert given is not None  # checked by __init__
            self._text = to_unicode(body, given)
            return
        # w3lib's html_to_unicode, in the same order, but every declared name is checked.
        encoding, bom = read_bom(body)
        if encoding is not None and bom is not None:
            body = body[len(bom) :]
        else:
            encoding = self._declared_or_detected(body)
        self._inferred = encoding
        self._text = to_unicode(body, encoding)

    def _declared_or_detected(self, body: bytes) -> str:
        """The encoding of a body without a BOM: the Content-Type's charset, a <meta> or
        XML declaration, else the class's default if the bytes decode in it, else
        Windows-1252."""
        encoding = (
            self._headers_encoding()
            or text_encoding(html_body_declared_encoding(body))
            or auto_detect(body, self._DEFAULT_ENCODING)
        )
        if encoding in ("utf-16", "utf-32"):
            encoding += "-be"  # no BOM: big-endian, as the Unicode standard says
        return encoding

    def _plain_ascii_body(self) -> bytes | None:
        """The body, when parsel builds the same tree from it as from ``text``
        (``parses_as_its_text``) and its encoding reads ASCII as ASCII; else None. The
        page is then not decoded and encoded again for lxml (its text waits until read)."""
        body = self._body
        if self._text is not None or not parses_as_its_text(body):
            return None
        given = self._encoding
        encoding = text_encoding(given) if given else self._declared_or_detected(body)
        if encoding not in ASCII_ALIKE:
            return None  # one that reads ASCII bytes otherwise (UTF-16, UTF-7)
        if given is None:
            self._inferred = encoding  # as _decode records it
        return body

    def _headers_encoding(self) -> str | None:
        """The Content-Type's charset, if it names a text encoding (Scrapy's name)."""
        return text_encoding(http_content_type_encoding(self.header("Content-Type")))

    def _declared_encoding(self) -> str | None:
        """The encoding the response states, before any guess (Scrapy's name): the one
        given to the constructor, else the BOM's, the Content-Type's, the body's own."""
        if self._encoding is not None:
            return self._encoding
        encoding, bom = read_bom(self._body)
        if encoding is not None and bom is not None:
            return encoding
        return self._headers_encoding() or text_encoding(html_body_declared_encoding(self._body))

    def _body_inferred_encoding(self) -> str:
        """The encoding the bytes themselves suggest, whatever is declared."""
        return auto_detect(self._body, self._DEFAULT_ENCODING)

    def declared_encoding(self) -> str | None:
        """The encoding named in the body itself, if any (for diagnostics)."""
        return html_body_declared_encoding(self._body)
