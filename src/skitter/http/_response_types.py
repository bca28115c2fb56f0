"""Response subclasses by what the body is, and how the downloader picks one.

Scrapy code tells pages apart with ``isinstance(response, TextResponse)`` (text, not an
image or a PDF) and ``HtmlResponse`` / ``XmlResponse`` (which selector type); a Scrapy
test builds ``HtmlResponse(url=..., body=..., encoding=...)``. So these are real
subclasses, chosen as Scrapy's ``responsetypes`` chooses them: by the Content-Type,
else the file name in Content-Disposition or the URL, else a look at the body.
"""

from __future__ import annotations

from collections.abc import Mapping
from mimetypes import MimeTypes
from typing import ClassVar

from skitter.http._response import Response

__all__ = [
    "MIMETYPES",
    "HtmlResponse",
    "JsonResponse",
    "TextResponse",
    "XmlResponse",
    "class_from_body",
    "class_from_disposition",
    "class_from_filename",
    "class_from_mime",
    "response_class",
]


class TextResponse(Response):
    """A response whose body is text. Its encoding is one of its ``attributes``: a
    copy with a new body (``replace(body=...)``) keeps the page's encoding, as in
    Scrapy."""

    __slots__ = ()
    attributes: ClassVar[tuple[str, ...]] = (*Response.attributes, "encoding")


class HtmlResponse(TextResponse):
    """An HTML page: its selector parses HTML."""

    __slots__ = ()
    selector_type: ClassVar[str | None] = "html"


class XmlResponse(TextResponse):
    """An XML document (feeds, sitemaps): its selector parses XML."""

    __slots__ = ()
    selector_type: ClassVar[str | None] = "xml"


class JsonResponse(TextResponse):
    """A JSON document: its selector is parsel's JSON one (``jmespath``); ``json()``
    parses the body."""

    __slots__ = ()
    selector_type: ClassVar[str | None] = "json"


_BY_MIME: dict[str, type[Response]] = {
    "text/html": HtmlResponse,
    "application/xhtml+xml": HtmlResponse,
    "application/vnd.wap.xhtml+xml": HtmlResponse,
    "text/xml": XmlResponse,
    "application/xml": XmlResponse,
    "application/atom+xml": XmlResponse,
    "application/rdf+xml": XmlResponse,
    "application/rss+xml": XmlResponse,
    "application/json": JsonResponse,
    "application/x-json": JsonResponse,
    "application/json-amazonui-streaming": JsonResponse,
    "application/javascript": TextResponse,
    "application/x-javascript": TextResponse,
}
# Python's built-in table only: the machine's /etc/mime.types would make the choice
# differ from one host to the next.
MIMETYPES = MimeTypes(filenames=())
# Bytes that do not occur in text: the controls other than tab, line feed and carriage
# return, and NUL (which Scrapy lets through: some text pages pad with it).
_CONTROLS = bytes(sorted(set(range(32)) - {0, 9, 10, 13}))
_SNIFF = 5000


def response_class(
    headers: Mapping[str, str] | None = None, url: str | None = None, body: bytes | None = None
) -> type[Response]:
    """The Response class for a download: from its Content-Type; failing that (none,
    or a type that says nothing, such as application/octet-stream), from the file name
    in Content-Disposition or the URL's; failing that, from the body's first bytes."""
    cls: type[Response] = Response
    if headers:
        content_type = headers.get("Content-Type")
        if content_type:
            coding = headers.get("Content-Encoding")
            if coding and coding.strip().lower() != "identity":
                return Response  # still compressed: bytes, whatever they encode
            cls = class_from_mime(content_type.partition(";")[0].strip().lower())
        if cls is Response:
            disposition = headers.get("Content-Disposition")
            if disposition:
                cls = class_from_disposition(disposition)
    if cls is Response and url:
        cls = class_from_filename(url)
    if cls is Response and body is not None:
        cls = class_from_body(body)
    return cls


def class_from_mime(mime: str) -> type[Response]:
    cls = _BY_MIME.get(mime)
    if cls is None:
        cls = TextResponse if mime.startswith("text/") else Response
    return cls


def class_from_filename(name: str) -> type[Response]:
    mime, coding = MIMETYPES.guess_type(name, strict=False)
    return class_from_mime(mime) if mime and not coding else Response


def class_from_disposition(disposition: str) -> type[Response]:
    _, _, params = disposition.partition(";")
    _, equals, filename = params.partition("=")
    return class_from_filename(filename.strip().strip("\"'")) if equals else Response


def class_from_body(body: bytes) -> type[Response]:
    chunk = body[:_SNIFF]
    if len(chunk.translate(None, _CONTROLS)) != len(chunk):
        return Response
    lower = chunk.lower()
    if b"<html>" in lower:
        return HtmlResponse
    if b"<?xml" in lower:
        return XmlResponse
    if b"<!doctype html>" in lower:
        return HtmlResponse
    return TextResponse
