"""Item exporters: the byte format of a feed (JSON lines, JSON array, CSV).

An exporter only encodes and writes; where the bytes go, when they are flushed and when
the file is closed is the feed's business (``_feeds.py``). Each exporter can start on an
existing file and continue it so that the result is still one valid document: JSON lines
and CSV append (CSV keeps the file's header), and a JSON array is reopened by moving its
closing bracket, because ``-o out.json`` run twice must not leave ``][`` in the middle.

JSON is written with orjson. Values it cannot encode natively go through ``json_default``
(nested attrs/pydantic items become dicts, sets lists, anything else ``str()``), so a
``Decimal`` or an odd object never stops an export; the few inputs orjson refuses outright
(integers beyond 64 bits, non-string keys, lone surrogates) fall back to the standard
library encoder for that one item. NaN and infinities, which JSON cannot hold (orjson
would write ``null`` and lose them without a word), are refused.

An exporter writes an item whole or not at all: it raises before writing anything when
the item cannot be encoded (a NaN in JSON, a character the feed's encoding lacks in CSV,
a ``Decimal`` in marshal). The feed then fails the crawl (``FeedExporter``) with
``unwritable``'s message, which names the field: a feed is never silently shorter than
the items it was given.
"""

from __future__ import annotations

import codecs
import csv
import io
import json
import logging
import math
from abc import ABC, abstractmethod
from collections.abc import Sequence
from datetime import date, datetime, time
from decimal import Decimal
from typing import IO, Any, ClassVar

import orjson

from skitter.exceptions import ConfigError
from skitter.items import exported_dict, field_names, is_item, item_to_dict

__all__ = [
    "CsvExporter",
    "ItemExporter",
    "JsonExporter",
    "JsonLinesExporter",
    "dumps_item_json",
    "dumps_json",
    "json_default",
]

log = logging.getLogger("skitter.feeds")

_ASCII_PROBE = "[]{},\n \"'"
_NEWLINE = orjson.OPT_APPEND_NEWLINE


def json_default(obj: Any) -> Any:
    """orjson's ``default=``: a JSON-able stand-in for a value orjson cannot encode."""
    if is_item(obj):
        return item_to_dict(obj)
    if isinstance(obj, set | frozenset):
        return list(obj)
    if isinstance(obj, bytes | bytearray):
        return bytes(obj).decode("utf-8", "backslashreplace")
    if isinstance(obj, Decimal):
        return str(obj)
    return str(obj)


def _stdlib_default(obj: Any) -> Any:
    if isinstance(obj, datetime | date | time):
        return obj.isoformat()
    return json_default(obj)


def dumps_json(data: Any, *, newline: bool = False) -> bytes:
    """``data`` as compact UTF-8 JSON: orjson's, or the standard library's (ASCII-escaped)
    for what orjson refuses. The one JSON encoding of an item, for feeds and for Redis."""
    try:
        return orjson.dumps(data, default=json_default, option=_NEWLINE if newline else 0)
    except orjson.JSONEncodeError:
        pass
    text = json.dumps(data, default=_stdlib_default, allow_nan=False)
    return (text + "\n").encode() if newline else text.encode()


def dumps_item_json(data: dict[str, Any], *, newline: bool = False) -> bytes:
    """``dumps_json`` of an item, refusing NaN and infinities (ValueError): orjson writes
    them as null, and a reader could not tell them from None. Feeds and Redis use it."""
    out = dumps_json(data, newline=newline)
    if b"null" in out:
        _check_finite(data)
    return out


class ItemExporter(ABC):
    """Encodes items of one format into a binary file opened by the feed.

    ``start(existing)`` is called once before the first item; ``existing`` says the file
    already holds an earlier export that this one continues (its position is then
    undefined: the exporter seeks). ``finish()`` completes the document; it is called
    exactly once, also when the crawl was cancelled.
    """

    format: ClassVar[str]

    def __init__(
        self,
        file: IO[bytes],
        *,
        encoding: str = "utf-8",
        fields: Sequence[str] | None = None,
        indent: int | None = None,
    ) -> None:
        self.file = file
        self.encoding = codecs.lookup(encoding).name
        self.fields: list[str] | None = list(fields) if fields else None
        self.indent = indent
        self._utf8 = self.encoding == "utf-8"
        self._encoder = codecs.getincrementalencoder(self.encoding)("strict")

    def start(self, existing: bool) -> None:
        if existing:
            self.file.seek(0, 2)
            # A continued file gets no second byte-order mark (as TextIOWrapper does).
            self._encoder.setstate(0)

    @abstractmethod
    def export(self, item: Any) -> None:
        """Write one item; raise (and write nothing) if it cannot be encoded."""

    def finish(self) -> None:
        """Complete the document (closing bracket, pending bytes)."""
        return  # JSON lines and CSV are complete after every row

    def unwritable(self, item: Any, exc: Exception) -> str:
        """Why ``item`` could not be exported (``export`` raised ``exc``), naming the
        first field this format cannot write on its own, found by trying each alone."""
        data = item if isinstance(item, dict) else exported_dict(item)
        blamed = ""
        for name, value in data.items():
            try:
                type(self)(io.BytesIO(), encoding=self.encoding, indent=self.indent).export(
                    {name: value}
                )
            except Exception:
                blamed = f", field {str(name)!r} ({type(value).__name__})"
                break
        return (
            f"cannot write a {type(item).__name__} item as {self.format}{blamed}: "
            f"{type(exc).__name__}: {exc}; convert the value in an item pipeline, or use a "
            "format that holds it"
        )

    # -- helpers ---------------------------------------------------------------------
    def _encode_text(self, text: str) -> bytes:
        return self._encoder.encode(text)

    def _select(self, item: Any) -> dict[str, Any]:
        data = item if item.__class__ is dict else exported_dict(item)
        fields = self.fields
        if fields is not None:
            data = {name: data[name] for name in fields if name in data}
        return data

    def _dumps(self, item: Any, *, newline: bool = False) -> bytes:
        """The item as JSON in the feed's encoding.

        Compact UTF-8 output (the common case) is orjson's; pretty-printing, other
        encodings (ASCII-escaped, so any ASCII-compatible encoding holds it) and what
        orjson refuses go through the standard library.
        """
        data = self._select(item)
        try:
            return self._json(data, newline)
        except ValueError:
            _check_finite(data)  # the reason, when that is the reason
            raise

    def _json(self, data: dict[str, Any], newline: bool) -> bytes:
        if self._utf8 and not self.indent:
            return dumps_item_json(data, newline=newline)
        text = json.dumps(
            data,
            default=_stdlib_default,
            ensure_ascii=not (self._utf8 and self.indent),
            allow_nan=False,  # NaN is not JSON: refused, rather than a broken file
            indent=self.indent or None,
        )
        if newline:
            text += "\n"
        return self._encode_text(text)

    def _check_ascii_compatible(self) -> None:
        if _ASCII_PROBE.encode(self.encoding, "replace") != _ASCII_PROBE.encode("ascii"):
            raise ConfigError(
                f"a {self.format} feed needs an ASCII-compatible encoding, not {self.encoding}"
            )


def _check_finite(data: dict[str, Any]) -> None:
    """ValueError if a value is a NaN or an infinity, which JSON has no way to write."""
    if any(_non_finite(value) for value in data.values()):
        raise ValueError("JSON has no NaN or Infinity")


def _non_finite(value: Any) -> bool:
    if isinstance(value, float):
        return not math.isfinite(value)
    if is_item(value):
        value = item_to_dict(value)
    if isinstance(value, dict):
        return any(_non_finite(inner) for inner in value.values())
    if isinstance(value, list | tuple | set | frozenset):
        return any(_non_finite(inner) for inner in value)
    return False


class JsonLinesExporter(ItemExporter):
    """One JSON object per line: appendable, streamable, valid after any crash."""

    format = "jsonl"

    def __init__(self, file: IO[bytes], **kwargs: Any) -> None:
        super().__init__(file, **kwargs)
        self.indent = None  # one line per item, always

    def start(self, existing: bool) -> None:
        self._check_ascii_compatible()
        super().start(existing)
        if existing:
            # An earlier run was killed mid-line: drop the partial record.
            truncate_partial_line(self.file)

    def export(self, item: Any) -> None:
        self.file.write(self._dumps(item, newline=True))


class JsonExporter(ItemExporter):
    """A JSON array, one item per line (or pretty-printed with ``indent``)."""

    format = "json"

    def __init__(self, file: IO[bytes], **kwargs: Any) -> None:
        super().__init__(file, **kwargs)
        self._first = True

    def start(self, existing: bool) -> None:
        self._check_ascii_compatible()
        if existing and self._reopen_array():
            return
        self.file.write(b"[")

    def _reopen_array(self) -> bool:
        """Move to just before the closing bracket of an existing array; False if the
        file is blank (then it is started afresh)."""
        file = self.file
        end, last = _last_non_space(file, file.seek(0, 2))
        if last is None:
            file.seek(0)
            file.truncate()
            return False
        if last != b"]":
            if _starts_array(file) and last in (b"[", b"}"):
                # An array left open (the crawl was killed, or the file was cut back to
                # a checkpoint): go on after its last item.
                self._first = last == b"["
                file.seek(end + 1)
                file.truncate()
                return True
            name = getattr(file, "name", "the file")
            raise ConfigError(
                f"cannot append to {name}: it does not end with a JSON array; "
                "overwrite it (-O, or 'overwrite': True in FEEDS) or use .jsonl"
            )
        _, before = _last_non_space(file, end)
        self._first = before == b"["
        file.seek(end)
        file.truncate()
        return True

    def export(self, item: Any) -> None:
        data = self._dumps(item)
        if self.indent:
            pad = b" " * self.indent
            data = pad + data.replace(b"\n", b"\n" + pad)
        self.file.write((b"\n" if self._first else b",\n") + data)
        self._first = False

    def finish(self) -> None:
        self.file.write(b"\n]\n")


class CsvExporter(ItemExporter):
    """CSV with a header line taken from ``fields`` or the first item's keys.

    Keys that are not columns are left out (one warning per feed, as Scrapy does);
    missing ones are empty cells. A list or tuple of strings is joined with ``,`` (Scrapy's
    ``join_multivalued``), so ``["a", "b"]`` is the cell ``a,b``, unless a string holds a
    comma (``["a,b", "c"]`` would read back as three): then it is JSON text, as other nested
    values
    (lists of numbers, dicts, items) are JSON text, which reads back unambiguously.
    """

    format = "csv"

    def __init__(self, file: IO[bytes], **kwargs: Any) -> None:
        super().__init__(file, **kwargs)
        self._columns: frozenset[str] = frozenset(self.fields or ())
        self._warned = False
        self._writer = csv.writer(_RowSink(file, self._encoder.encode), lineterminator="\r\n")

    def start(self, existing: bool) -> None:
        header = self._read_header() if existing else None
        super().start(existing)
        if header:
            if self.fields is not None and self.fields != header:
                log.warning(
                    "Appending to %s, whose header %s differs from the feed's fields %s: "
                    "keeping the file's columns",
                    getattr(self.file, "name", "a CSV feed"),
                    header,
                    self.fields,
                )
            self._set_fields(header, write=False)
            truncate_partial_line(self.file)  # a row cut by a crash is dropped
        elif self.fields is not None:
            self._set_fields(self.fields, write=True)

    def _read_header(self) -> list[str] | None:
        self.file.seek(0)
        line = self.file.readline()
        if not line.strip():
            return None
        text = line.decode(self.encoding, "replace").lstrip("\ufeff")
        return next(csv.reader([text]), None) or None

    def _set_fields(self, fields: Sequence[str], *, write: bool) -> None:
        self.fields = list(fields)
        self._columns = frozenset(self.fields)
        if write:
            self._writer.writerow(self.fields)

    def export(self, item: Any) -> None:
        row = item if item.__class__ is dict else exported_dict(item)
        if self.fields is None:
            self._set_fields(field_names(item), write=True)
        fields = self.fields
        assert fields is not None
        if not self._warned and not self._columns.issuperset(row):
            self._warned = True
            extra = sorted(str(key) for key in row if key not in self._columns)
            log.warning(
                "CSV feed %s has no columns for %s: these fields are left out (this "
                "warning is shown once; set 'fields' in FEEDS to choose the columns)",
                getattr(self.file, "name", "?"),
                extra,
            )
        get = row.get
        self._writer.writerow([_cell(get(name)) for name in fields])


class _RowSink:
    """What ``csv.writer`` writes to: it hands over one whole row per call, which is
    encoded at once, so a row that cannot be encoded is refused whole."""

    __slots__ = ("write",)

    def __init__(self, file: IO[bytes], encode: Any) -> None:
        self.write = lambda text: file.write(encode(text))


def _cell(value: Any) -> Any:
    cls = value.__class__
    if cls is str or cls is int or cls is float or cls is bool:
        return value
    if value is None:
        return ""
    if isinstance(value, bytes | bytearray):
        return bytes(value).decode("utf-8", "backslashreplace")
    if isinstance(value, datetime | date | time):
        return value.isoformat()
    if (cls is list or cls is tuple) and all(
        part.__class__ is str and "," not in part for part in value
    ):
        return ",".join(value)
    if isinstance(value, list | tuple | set | frozenset | dict) or is_item(value):
        try:
            return orjson.dumps(value, default=json_default).decode()
        except orjson.JSONEncodeError:
            return json.dumps(value, default=_stdlib_default)
    return str(value)


def truncate_partial_line(file: IO[bytes]) -> None:
    """Cut a file of lines back to its last complete line (a crash may leave half a
    record); the position ends at the end of the file."""
    end = file.seek(0, 2)
    if end == 0 or _last_byte(file) == b"\n":
        return
    pos = end
    while pos > 0:
        step = min(pos, 1 << 16)
        file.seek(pos - step)
        chunk = file.read(step)
        newline = chunk.rfind(b"\n")
        if newline >= 0:
            keep = pos - step + newline + 1
            break
        pos -= step
    else:
        keep = 0
    file.seek(keep)
    file.truncate()


def _starts_array(file: IO[bytes]) -> bool:
    file.seek(0)
    head = file.read(64).lstrip()
    file.seek(0, 2)
    return head.startswith(b"[")


def _last_byte(file: IO[bytes]) -> bytes:
    end = file.seek(0, 2)
    if end == 0:
        return b""
    file.seek(end - 1)
    last = file.read(1)
    file.seek(end)
    return last


def _last_non_space(file: IO[bytes], end: int) -> tuple[int, bytes | None]:
    """Position and value of the last non-whitespace byte before ``end``."""
    pos = end
    while pos > 0:
        start = max(0, pos - 4096)
        file.seek(start)
        chunk = file.read(pos - start)
        stripped = chunk.rstrip()
        if stripped:
            at = start + len(stripped) - 1
            return at, stripped[-1:]
        pos = start
    return 0, None
