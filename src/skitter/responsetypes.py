"""Scrapy's ``scrapy.responsetypes``: which Response class a download becomes.

``responsetypes.from_args(headers=, url=, filename=, body=)`` and the single-source
methods Scrapy has, over the one choice skitter's transports make
(``skitter.http.response_class``). Headers may be str- or bytes-valued.

A subclass may give Scrapy's ``CLASSES`` table (MIME type, or ``type/*``, to a class or
its dotted path), as scrapy-splash's does to make its own response classes: the MIME
type skitter finds (from the Content-Type, the file name or the body) is then looked up
there, as Scrapy does, and what the table lacks is a plain ``Response``.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, ClassVar

from skitter._components import load_object
from skitter.http import Headers, HtmlResponse, Response, TextResponse, XmlResponse, response_class
from skitter.http import wiring as _types

__all__ = ["ResponseTypes", "responsetypes"]


def _text(value: Any) -> str:
    if isinstance(value, list | tuple):
        value = value[-1] if value else b""
    return value.decode("latin-1") if isinstance(value, bytes) else str(value or "")


class ResponseTypes:
    """The Response class for a MIME type, Content-Type, Content-Disposition, file
    name, headers or body; ``from_args`` weighs them as a download does."""

    #: Scrapy's table of MIME types to classes; empty: skitter's own choice.
    CLASSES: ClassVar[Mapping[str, Any]] = {}

    def __init__(self) -> None:
        self.classes: dict[str, type[Response]] = {
            mime: load_object(cls) for mime, cls in self.CLASSES.items()
        }

    @property
    def mimetypes(self) -> Any:
        """The MIME table file names are read with (Python's own, never the machine's)."""
        return _types.MIMETYPES

    def from_mimetype(self, mimetype: str | bytes | None) -> type[Response]:
        if not mimetype:
            return Response
        mime = _text(mimetype).strip().lower()
        if not self.classes:
            return _types.class_from_mime(mime)
        found = self.classes.get(mime)
        if found is None:
            found = self.classes.get(f"{mime.partition('/')[0]}/*", Response)
        return found

    def from_content_type(
        self, content_type: str | bytes, content_encoding: str | bytes | None = None
    ) -> type[Response]:
        if content_encoding and _text(content_encoding).strip().lower() != "identity":
            return Response
        return self.from_mimetype(_text(content_type).partition(";")[0])

    def from_content_disposition(self, content_disposition: str | bytes) -> type[Response]:
        try:
            text = _text(content_disposition)
        except UnicodeDecodeError:  # latin-1 decodes every byte; kept for other inputs
            return Response
        if not self.classes:
            return _types.class_from_disposition(text)
        _, _, params = text.partition(";")
        _, equals, filename = params.partition("=")
        return self.from_filename(filename.strip().strip("\"'")) if equals else Response

    def from_headers(self, headers: Mapping[Any, Any]) -> type[Response]:
        if not headers:
            return Response
        if not self.classes:
            return response_class(_str_headers(headers))
        found: type[Response] = Response
        given = _str_headers(headers)
        if given.get("Content-Type"):
            found = self.from_content_type(
                given["Content-Type"], given.get("Content-Encoding") or None
            )
        if found is Response and given.get("Content-Disposition"):
            found = self.from_content_disposition(given["Content-Disposition"])
        return found

    def from_filename(self, filename: str) -> type[Response]:
        if not self.classes:
            return _types.class_from_filename(filename)
        mime, coding = self.mimetypes.guess_type(filename, strict=False)
        return self.from_mimetype(mime) if mime and not coding else Response

    def from_body(self, body: bytes) -> type[Response]:
        found = _types.class_from_body(body)
        if not self.classes or found is Response:
            return found
        return self.from_mimetype(_BODY_MIMES.get(found, "text/plain"))

    def from_args(
        self,
        headers: Mapping[Any, Any] | None = None,
        url: str | None = None,
        filename: str | None = None,
        body: bytes | None = None,
    ) -> type[Response]:
        if self.classes:
            cls = self.from_headers(headers) if headers else Response
            if cls is Response and url:
                cls = self.from_filename(url)
        else:
            cls = response_class(_str_headers(headers) if headers else None, url, None)
        if cls is Response and filename:
            cls = self.from_filename(filename)
        if cls is Response and body is not None:
            cls = self.from_body(body)
        return cls


#: The MIME type a body sniffed as each class stands for (a ``CLASSES`` table's key).
_BODY_MIMES: Mapping[type[Response], str] = {
    HtmlResponse: "text/html",
    XmlResponse: "text/xml",
    TextResponse: "text/plain",
}


def _str_headers(headers: Mapping[Any, Any]) -> dict[str, str]:
    """Scrapy's bytes headers as the str headers skitter's choice reads."""
    if isinstance(headers, Headers):
        return {_text(key): headers.text(key) or "" for key in headers}
    return {_text(key).title(): _text(value) for key, value in headers.items()}


responsetypes = ResponseTypes()
