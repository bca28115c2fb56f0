"""Scrapy's ``scrapy.responsetypes``: which Response class a download becomes.

``responsetypes.from_args(headers=, url=, filename=, body=)`` and the single-source
methods Scrapy has, over the one choice skitter's transports make
(``skitter.http.response_class``). Headers may be str- or bytes-valued.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from skitter.http import Headers, Response, response_class
from skitter.http import wiring as _types

__all__ = ["ResponseTypes", "responsetypes"]


def _text(value: Any) -> str:
    if isinstance(value, list | tuple):
        value = value[-1] if value else b""
    return value.decode("latin-1") if isinstance(value, bytes) else str(value or "")


class ResponseTypes:
    """The Response class for a MIME type, Content-Type, Content-Disposition, file
    name, headers or body; ``from_args`` weighs them as a download does."""

    @property
    def mimetypes(self) -> Any:
        """The MIME table file names are read with (Python's own, never the machine's)."""
        return _types.MIMETYPES

    def from_mimetype(self, mimetype: str | bytes | None) -> type[Response]:
        return _types.class_from_mime(_text(mimetype).strip().lower()) if mimetype else Response

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
        return _types.class_from_disposition(text)

    def from_headers(self, headers: Mapping[Any, Any]) -> type[Response]:
        return response_class(_str_headers(headers)) if headers else Response

    def from_filename(self, filename: str) -> type[Response]:
        return _types.class_from_filename(filename)

    def from_body(self, body: bytes) -> type[Response]:
        return _types.class_from_body(body)

    def from_args(
        self,
        headers: Mapping[Any, Any] | None = None,
        url: str | None = None,
        filename: str | None = None,
        body: bytes | None = None,
    ) -> type[Response]:
        cls = response_class(_str_headers(headers) if headers else None, url, None)
        if cls is Response and filename:
            cls = self.from_filename(filename)
        if cls is Response and body is not None:
            cls = self.from_body(body)
        return cls


def _str_headers(headers: Mapping[Any, Any]) -> dict[str, str]:
    """Scrapy's bytes headers as the str headers skitter's choice reads."""
    if isinstance(headers, Headers):
        return {_text(key): headers.text(key) or "" for key in headers}
    return {_text(key).title(): _text(value) for key, value in headers.items()}


responsetypes = ResponseTypes()
