"""Streaming a feed's nodes or rows out of a response body.

A feed can be large, and its consumer handles one node or row at a time, so neither
the whole tree nor the whole decoded text is ever built: XML nodes come from lxml's
``iterparse`` (each one serialized into its own small selector, then cleared from the
tree, with the nodes before it), CSV rows from a ``csv.reader`` over the body decoded
piece by piece. The XML is read with entities unresolved and no network access.

CSV fields have no length limit of their own: the csv module's (131,072 characters, a
process-wide setting) is raised to the body's length while each row is read, and put
back after, so the only limit is the download's (DOWNLOAD_MAXSIZE). A row the csv
module cannot read is skipped with a warning naming its line, and the rows after it
are read: one bad row never ends a feed.
"""

from __future__ import annotations

import codecs
import csv
import logging
import re
from collections.abc import Iterator
from typing import Any

from lxml import etree
from parsel import Selector
from w3lib.encoding import http_content_type_encoding, read_bom, resolve_encoding

from skitter.http import Response

__all__ = ["csv_rows", "xml_nodes"]

log = logging.getLogger("skitter.spiders.feed")

_CHUNK = 64 * 1024
#: Where a file opened with ``newline=""`` (what the csv module asks for) ends a line:
#: after ``\n``, and after a ``\r`` that is not the first half of ``\r\n``.
_LINE_END = re.compile(r"(?<=\n)|(?<=\r)(?!\n)")


class _BodyReader:
    """A response body as the file ``iterparse`` reads, in slices (no copy of the whole
    body), with leading whitespace skipped: an XML declaration must come first."""

    def __init__(self, body: bytes) -> None:
        self._view = memoryview(body)
        head = body[:4096]
        self._at = len(head) - len(head.lstrip())

    def read(self, size: int = -1) -> bytes:
        end = len(self._view) if size < 0 else self._at + size
        piece = self._view[self._at : end].tobytes()
        self._at += len(piece)
        return piece


def _declared_encoding(response: Response) -> str | None:
    """The encoding the body or its headers name (a BOM, a Content-Type charset)."""
    encoding, _bom = read_bom(response.body[:4])
    if encoding is None:
        encoding = http_content_type_encoding(response.header("Content-Type"))
    return resolve_encoding(encoding) if encoding else None


def xml_nodes(
    response: Response, tag: str, namespace: str | None = None, prefix: str = "x"
) -> Iterator[Selector]:
    """A selector for each ``tag`` element of the body, in document order.

    ``tag`` is a name (``item``) or a prefixed name (``n:item``), the prefix resolved by
    the document's own declarations; the node's selector has that prefix registered.
    With ``namespace``, ``tag`` is a name in that namespace, and ``prefix`` the name its
    selector knows it by (Scrapy's ``xmliter_lxml``).
    """
    wanted: str | None
    if namespace is not None:
        name, wanted = tag, f"{{{namespace}}}{tag}"
    else:
        prefix, _, name = tag.rpartition(":")
        wanted = name if not prefix else None
    events = etree.iterparse(
        _BodyReader(response.body),
        events=("end", "start-ns"),
        encoding=_declared_encoding(response),
        resolve_entities=False,
        no_network=True,
        huge_tree=False,
    )
    for event, data in events:
        if event == "start-ns":
            declared_prefix, uri = data
            if namespace is None and prefix and wanted is None and declared_prefix == prefix:
                namespace, wanted = uri, f"{{{uri}}}{name}"
            continue
        if data.tag != wanted:
            continue
        text = etree.tostring(data, encoding="unicode")
        data.clear()
        parent = data.getparent()
        # What came before is read: drop it, unless the node is inside another one of
        # its kind, whose own text is still to be serialized whole.
        if parent is not None and next(data.iterancestors(wanted), None) is None:
            while data.getprevious() is not None:
                del parent[0]
        selector = Selector(text=text, type="xml")
        if namespace is not None:
            selector.register_namespace(prefix, namespace)
            yield selector.xpath(f"/{prefix}:{name}")[0]
        else:
            yield selector.xpath(f"/{name}")[0]


def _text_pieces(response: Response, encoding: str | None = None) -> Iterator[str]:
    """The body decoded piece by piece: ``encoding`` when given, else the declared one,
    else UTF-8 when it is valid UTF-8, else Windows-1252 (``Response.text``'s order)."""
    body = response.body
    encoding = encoding or _declared_encoding(response)
    if encoding is None:
        encoding = "utf-8" if body.isascii() or _valid_utf8(body) else "cp1252"
    decoder = codecs.getincrementaldecoder(encoding)(errors="replace")
    view = memoryview(body)
    if encoding.replace("_", "-").lower() in ("utf-8", "utf-8-sig") and body[:3] == b"\xef\xbb\xbf":
        view = view[3:]
    for at in range(0, len(view), _CHUNK):
        yield decoder.decode(view[at : at + _CHUNK].tobytes())
    yield decoder.decode(b"", final=True)


def _valid_utf8(body: bytes) -> bool:
    decoder = codecs.getincrementaldecoder("utf-8")()
    try:
        for at in range(0, len(body), _CHUNK):
            decoder.decode(body[at : at + _CHUNK])
        decoder.decode(b"", final=True)
    except UnicodeDecodeError:
        return False
    return True


def _lines(response: Response, encoding: str | None = None) -> Iterator[str]:
    """The decoded body as lines, each with its line break, split where a file opened
    with ``newline=""`` splits them (``\r\n``, ``\r`` or ``\n``), as the csv module
    expects: it keeps the breaks inside quoted fields, and a file of bare ``\r`` (old
    Mac exports) is rows, not one unreadable line."""
    pending = ""
    for piece in _text_pieces(response, encoding):
        pending += piece
        if "\n" not in piece and "\r" not in piece:
            continue
        lines = _LINE_END.split(pending)
        pending = lines.pop()
        if not pending and lines[-1].endswith("\r"):
            pending = lines.pop()  # maybe the first half of a \r\n cut by the piece
        yield from lines
    if pending:
        yield from (line for line in _LINE_END.split(pending) if line)


def _readable_rows(reader: Any, size: int, response: Response) -> Iterator[list[str]]:
    """``reader``'s rows, each read with a field limit of ``size`` (the body's length,
    which no field can exceed), the process's limit put back after each; a row the
    csv module refuses is skipped with a warning, and reading goes on."""
    while True:
        previous = csv.field_size_limit(size)
        try:
            row = next(reader)
        except StopIteration:
            return
        except csv.Error as exc:
            log.warning(
                "skipping an unreadable row at line %d of %s: %s", reader.line_num, response, exc
            )
            continue
        finally:
            csv.field_size_limit(previous)
        yield row


def csv_rows(
    response: Response,
    delimiter: str | None = None,
    headers: list[str] | None = None,
    quotechar: str | None = None,
    encoding: str | None = None,
) -> Iterator[dict[str, str]]:
    """A dict per row, keyed by ``headers`` (else by the first row). Rows whose length
    differs from the headers' are skipped with a warning, as in Scrapy, and so are rows
    the csv module cannot read. ``encoding`` overrides the body's declared one."""
    options: dict[str, Any] = {}
    if delimiter:
        options["delimiter"] = delimiter
    if quotechar:
        options["quotechar"] = quotechar
    reader = csv.reader(_lines(response, encoding), **options)
    rows = _readable_rows(reader, len(response.body) + 1, response)
    if not headers:
        headers = next(rows, None)
        if headers is None:
            return
    for row in rows:
        if len(row) != len(headers):
            log.warning(
                "ignoring row %d of %s (length: %d, should be: %d)",
                reader.line_num,
                response,
                len(row),
                len(headers),
            )
            continue
        yield dict(zip(headers, row, strict=True))
