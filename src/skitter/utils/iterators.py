"""Scrapy's ``scrapy.utils.iterators``: the XML and CSV feed readers of XMLFeedSpider
and CSVFeedSpider, for code that reads a feed itself (a response, or its body as
``str`` or ``bytes``). Both stream: a node or a row at a time, never the whole tree."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

from parsel import Selector

from skitter.http import Response, TextResponse
from skitter.spiders.wiring import csv_rows, xml_nodes

__all__ = ["csviter", "xmliter_lxml"]


def _body_or_str(obj: Response | str | bytes, unicode: bool = True) -> str | bytes:
    """The text (``unicode``) or bytes of a response or a body: a text response by its
    own encoding, anything else as UTF-8."""
    if isinstance(obj, Response):
        if not unicode:
            return obj.body
        if isinstance(obj, TextResponse):
            return obj.text
        return obj.body.decode("utf-8")
    if isinstance(obj, str):
        return obj if unicode else obj.encode("utf-8")
    if isinstance(obj, bytes):
        return obj.decode("utf-8") if unicode else obj
    raise TypeError(f"obj must be Response or str or bytes, not {type(obj).__name__}")


def _as_response(obj: Any) -> Response:
    """``obj`` as a response to read: a response as it is, a body in one (a ``str``
    encoded as UTF-8, which the reader is then told)."""
    if isinstance(obj, Response):
        return obj
    body = _body_or_str(obj, unicode=False)
    assert isinstance(body, bytes)
    # A str is text already: its XML declaration no longer says how it is encoded.
    headers = {"Content-Type": "text/xml; charset=utf-8"} if isinstance(obj, str) else None
    return Response("about:blank", body=body, headers=headers)


def xmliter_lxml(
    obj: Response | str | bytes, nodename: str, namespace: str | None = None, prefix: str = "x"
) -> Iterator[Selector]:
    """A selector for each ``nodename`` element, in document order; with ``namespace``,
    elements of that name in that namespace, known to the selector as ``prefix``."""
    yield from xml_nodes(_as_response(obj), nodename, namespace, prefix)


def csviter(
    obj: Response | str | bytes,
    delimiter: str | None = None,
    headers: list[str] | None = None,
    encoding: str | None = None,
    quotechar: str | None = None,
) -> Iterator[dict[str, str]]:
    """A dict per row, keyed by ``headers`` or the first row; rows of another length are
    skipped with a warning. A text response is read in its own encoding, anything else
    in ``encoding`` (UTF-8 when not given)."""
    response = _as_response(obj)
    if isinstance(obj, TextResponse):
        encoding = obj.encoding
    yield from csv_rows(response, delimiter, headers, quotechar, encoding or "utf-8")
