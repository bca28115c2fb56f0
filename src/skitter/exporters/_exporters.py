"""Scrapy's item exporter API: ``BaseItemExporter`` and the eight exporters on top of it.

A Scrapy project's own exporters subclass these (``FEED_EXPORTERS``), its tests build
them on a ``BytesIO``, and plug-ins call ``serialize_field``; so the classes behave as
Scrapy documents them: ``start_exporting()``, ``export_item(item)`` per item,
``finish_exporting()``, with the options ``fields_to_export`` (a list, or a dict of
item field -> output name), ``export_empty_fields``, ``encoding`` and ``indent``, and a
field's ``serializer`` metadata applied by ``serialize_field``.

skitter's own feeds do not go through these classes: theirs (``skitter.pipelines``) also
continue an existing file and refuse a value they would lose. The feed layer runs an
exporter of this API, a user's, through an adapter, so a registered class is written to
exactly as Scrapy would write to it.
"""

from __future__ import annotations

import csv
import io
import json
import logging
import marshal
import pickle
import pprint
from collections.abc import Iterable, Iterator, Mapping
from datetime import date, datetime, time
from decimal import Decimal
from typing import IO, Any
from xml.sax.saxutils import XMLGenerator

from itemadapter import ItemAdapter, is_item

__all__ = [
    "BaseItemExporter",
    "CsvItemExporter",
    "JsonItemExporter",
    "JsonLinesItemExporter",
    "MarshalItemExporter",
    "PickleItemExporter",
    "PprintItemExporter",
    "PythonItemExporter",
    "XmlItemExporter",
]

_logger = logging.getLogger("skitter.exporters")

_OPTIONS = ("encoding", "fields_to_export", "export_empty_fields", "indent")


class _ItemJSONEncoder(json.JSONEncoder):
    """JSON for what items hold beside JSON's own types: sets as lists, dates and times
    in ISO 8601, decimals as strings, nested items as objects, requests and responses as
    their short description."""

    def default(self, o: Any) -> Any:
        if isinstance(o, set | frozenset):
            return list(o)
        if isinstance(o, datetime | date | time):
            return o.isoformat()
        if isinstance(o, Decimal):
            return str(o)
        if is_item(o):
            return ItemAdapter(o).asdict()
        described = _described(o)
        if described is not None:
            return described
        return super().default(o)


def _described(o: Any) -> str | None:
    """``<Request GET url>`` / ``<Response 200 url>``, found by shape rather than by class
    so this module needs nothing from the HTTP layer."""
    url = getattr(o, "url", None)
    if not isinstance(url, str):
        return None
    if isinstance(getattr(o, "method", None), str):
        return f"<{type(o).__name__} {o.method} {url}>"
    if isinstance(getattr(o, "status", None), int):
        return f"<{type(o).__name__} {o.status} {url}>"
    return None


def _as_bytes(text: str, encoding: str | None) -> bytes:
    return text.encode(encoding or "utf-8")


class BaseItemExporter:
    """What every exporter shares: its options and turning an item into the
    ``(name, value)`` pairs it writes.

    Unknown keyword options are a ``TypeError`` (a misspelt ``fields_to_expor`` must not
    be ignored), unless ``dont_fail`` is set: then an exporter passes the rest on (to the
    JSON encoder, the CSV writer), which refuses what it does not know itself.
    """

    def __init__(self, *, dont_fail: bool = False, **kwargs: Any) -> None:
        self._configure(kwargs, dont_fail=dont_fail)

    def _configure(self, options: dict[str, Any], dont_fail: bool = False) -> None:
        """Take this class's options out of ``options``; what is left is the caller's."""
        self.encoding: str | None = options.pop("encoding", None)
        fields = options.pop("fields_to_export", None)
        if fields is not None and not isinstance(fields, Mapping):
            fields = list(fields)
        self.fields_to_export: list[str] | Mapping[str, str] | None = fields
        self.export_empty_fields: bool = options.pop("export_empty_fields", False)
        self.indent: int | None = options.pop("indent", None)
        if not dont_fail and options:
            raise TypeError(f"Unexpected options: {', '.join(options)}")

    def export_item(self, item: Any) -> Any:
        raise NotImplementedError

    def serialize_field(self, field: Mapping[str, Any] | Any, name: str, value: Any) -> Any:
        """``value`` through the field's ``serializer`` metadata, if it declares one."""
        serializer = field.get("serializer") if field else None
        return serializer(value) if serializer is not None else value

    def start_exporting(self) -> None:
        """Called once before the first item (a document's opening, a header)."""

    def finish_exporting(self) -> None:
        """Called once after the last item (a document's closing)."""

    def get_serialized_fields(
        self, item: Any, default_value: Any = None, include_empty: bool | None = None
    ) -> Iterator[tuple[str, Any]]:
        """The ``(output name, serialized value)`` pairs of ``item``, in
        ``fields_to_export`` order (else the item's), a missing field as
        ``default_value`` when empty fields are included."""
        adapter = ItemAdapter(item)
        if include_empty is None:
            include_empty = self.export_empty_fields
        for source, output in self._field_pairs(adapter, include_empty):
            if source in adapter:
                meta = adapter.get_field_meta(source)
                yield output, self.serialize_field(meta, output, adapter[source])
            else:
                yield output, default_value

    #: The name Scrapy's exporters used before it was public.
    _get_serialized_fields = get_serialized_fields

    def _field_pairs(self, adapter: ItemAdapter, include_empty: bool) -> Iterable[tuple[str, str]]:
        chosen = self.fields_to_export
        if chosen is None:
            names = adapter.field_names() if include_empty else _populated(adapter)
            return ((name, name) for name in names)
        pairs = chosen.items() if isinstance(chosen, Mapping) else ((n, n) for n in chosen)
        if include_empty:
            return pairs
        return ((source, output) for source, output in pairs if source in adapter)


def _populated(adapter: ItemAdapter) -> list[str]:
    """The fields an item holds: declared ones in declaration order, then the rest in
    the item's order (items that allow undeclared fields)."""
    present = list(adapter.keys())
    held = set(present)
    declared = [name for name in adapter.field_names() if name in held]
    return list(dict.fromkeys([*declared, *present]))


class JsonLinesItemExporter(BaseItemExporter):
    """One JSON object per line. Extra options go to the JSON encoder (``sort_keys``)."""

    def __init__(self, file: IO[bytes], **kwargs: Any) -> None:
        super().__init__(dont_fail=True, **kwargs)
        self.file = file
        kwargs = {k: v for k, v in kwargs.items() if k not in _OPTIONS}
        kwargs.setdefault("ensure_ascii", not self.encoding)
        self.encoder = _ItemJSONEncoder(**kwargs)

    def export_item(self, item: Any) -> None:
        text = self.encoder.encode(dict(self.get_serialized_fields(item)))
        self.file.write(_as_bytes(text + "\n", self.encoding))


class JsonItemExporter(BaseItemExporter):
    """A JSON array. ``indent`` > 0 pretty-prints each item; 0 puts each on its own
    line; None writes the array on one line."""

    def __init__(self, file: IO[bytes], **kwargs: Any) -> None:
        super().__init__(dont_fail=True, **kwargs)
        self.file = file
        kwargs = {k: v for k, v in kwargs.items() if k not in _OPTIONS}
        kwargs.setdefault("indent", self.indent if self.indent else None)
        kwargs.setdefault("ensure_ascii", not self.encoding)
        self.encoder = _ItemJSONEncoder(**kwargs)
        self.first_item = True

    def _newline(self) -> None:
        if self.indent is not None:
            self.file.write(b"\n")

    def start_exporting(self) -> None:
        self.file.write(b"[")
        self._newline()

    def finish_exporting(self) -> None:
        self._newline()
        self.file.write(b"]")

    def export_item(self, item: Any) -> None:
        # Encoded before anything is written: an item that fails leaves no comma behind.
        data = _as_bytes(self.encoder.encode(dict(self.get_serialized_fields(item))), self.encoding)
        if self.first_item:
            self.first_item = False
        else:
            self.file.write(b",")
            self._newline()
        self.file.write(data)


class XmlItemExporter(BaseItemExporter):
    """``<items><item><field>value</field>...</item></items>``; a list is repeated
    ``<value>`` elements, a dict or nested item child elements. ``item_element`` and
    ``root_element`` rename the two outer elements."""

    def __init__(self, file: IO[bytes], **kwargs: Any) -> None:
        self.item_element: str = kwargs.pop("item_element", "item")
        self.root_element: str = kwargs.pop("root_element", "items")
        super().__init__(**kwargs)
        if not self.encoding:
            self.encoding = "utf-8"
        self.xg = XMLGenerator(file, encoding=self.encoding, short_empty_elements=False)

    def _newline(self, new_item: bool = False) -> None:
        if self.indent is not None and (self.indent > 0 or new_item):
            self.xg.characters("\n")

    def _indent(self, depth: int = 1) -> None:
        if self.indent:
            self.xg.characters(" " * self.indent * depth)

    def start_exporting(self) -> None:
        self.xg.startDocument()
        self.xg.startElement(self.root_element, {})  # type: ignore[arg-type]
        self._newline(new_item=True)

    def export_item(self, item: Any) -> None:
        self._indent(1)
        self.xg.startElement(self.item_element, {})  # type: ignore[arg-type]
        self._newline()
        for name, value in self.get_serialized_fields(item, default_value=""):
            self._field(name, value, 2)
        self._indent(1)
        self.xg.endElement(self.item_element)
        self._newline(new_item=True)

    def finish_exporting(self) -> None:
        self.xg.endElement(self.root_element)
        self.xg.endDocument()

    def _field(self, name: str, value: Any, depth: int) -> None:
        self._indent(depth)
        self.xg.startElement(name, {})  # type: ignore[arg-type]
        if is_item(value) or isinstance(value, Mapping):
            self._newline()
            for inner_name, inner in ItemAdapter(value).items():
                self._field(inner_name, inner, depth + 1)
            self._indent(depth)
        elif _listlike(value):
            self._newline()
            for inner in value:
                self._field("value", inner, depth + 1)
            self._indent(depth)
        else:
            self.xg.characters(value if isinstance(value, str) else str(value))
        self.xg.endElement(name)
        self._newline()


def _listlike(value: Any) -> bool:
    return hasattr(value, "__iter__") and not isinstance(value, str | bytes | Mapping)


class CsvItemExporter(BaseItemExporter):
    """CSV with a header line (``include_headers_line``), columns from
    ``fields_to_export`` or the first item's fields; a list of strings is one cell
    joined with ``join_multivalued``. Extra options go to ``csv.writer``; ``errors``
    is the encoding's error handler."""

    def __init__(
        self,
        file: IO[bytes],
        include_headers_line: bool = True,
        join_multivalued: str = ",",
        errors: str | None = None,
        **kwargs: Any,
    ) -> None:
        super().__init__(dont_fail=True, **kwargs)
        if not self.encoding:
            self.encoding = "utf-8"
        self.include_headers_line = include_headers_line
        self.stream = io.TextIOWrapper(
            file,
            line_buffering=False,
            write_through=True,
            encoding=self.encoding,
            newline="",  # csv writes its own line ends
            errors=errors,
        )
        writer_options = {k: v for k, v in kwargs.items() if k not in _OPTIONS}
        self.csv_writer = csv.writer(self.stream, **writer_options)
        self._headers_not_written = True
        self._join_multivalued = join_multivalued
        self._fields_from_item = False
        self._warned_dropped = False

    def serialize_field(self, field: Mapping[str, Any] | Any, name: str, value: Any) -> Any:
        serializer = field.get("serializer") if field else None
        return serializer(value) if serializer is not None else self._join_if_needed(value)

    def _join_if_needed(self, value: Any) -> Any:
        if isinstance(value, list | tuple):
            try:
                return self._join_multivalued.join(value)
            except TypeError:  # not all strings: the cell is the list's text
                return value
        return value

    def export_item(self, item: Any) -> None:
        if self._headers_not_written:
            self._headers_not_written = False
            self._start_columns(item)
        if self._fields_from_item and not self._warned_dropped:
            self._warn_dropped(item)
        fields = self.get_serialized_fields(item, default_value="", include_empty=True)
        self.csv_writer.writerow([self._cell(value) for _, value in fields])

    def _warn_dropped(self, item: Any) -> None:
        """Once per file: a later item has fields the columns (taken from the first item)
        leave out, so its values are lost."""
        columns = set(self.fields_to_export or ())
        dropped = sorted(set(ItemAdapter(item).field_names()) - columns)
        if dropped:
            self._warned_dropped = True
            _logger.warning(
                "CSVExporter dropped fields %s: the columns were taken from the first item; "
                "list every column in FEED_EXPORT_FIELDS (or 'fields' in FEEDS) to keep them",
                dropped,
            )

    def _cell(self, value: Any) -> Any:
        if isinstance(value, bytes):
            return value.decode(self.encoding or "utf-8")
        return value

    def _start_columns(self, item: Any) -> None:
        if not self.fields_to_export:
            self.fields_to_export = list(ItemAdapter(item).field_names())
            self._fields_from_item = True
        if self.include_headers_line:
            chosen = self.fields_to_export
            header = chosen.values() if isinstance(chosen, Mapping) else chosen
            self.csv_writer.writerow([self._cell(name) for name in header])

    def finish_exporting(self) -> None:
        # Hand the file back without closing it: the caller owns it.
        self.stream.detach()


class PickleItemExporter(BaseItemExporter):
    """One pickled dict per item (``protocol``, 4 by default)."""

    def __init__(self, file: IO[bytes], protocol: int = 4, **kwargs: Any) -> None:
        super().__init__(**kwargs)
        self.file = file
        self.protocol = protocol

    def export_item(self, item: Any) -> None:
        pickle.dump(dict(self.get_serialized_fields(item)), self.file, self.protocol)


class MarshalItemExporter(BaseItemExporter):
    """One ``marshal``-ed dict per item: Python's basic types only."""

    def __init__(self, file: IO[bytes], **kwargs: Any) -> None:
        super().__init__(**kwargs)
        self.file = file

    def export_item(self, item: Any) -> None:
        marshal.dump(dict(self.get_serialized_fields(item)), self.file)


class PprintItemExporter(BaseItemExporter):
    """``pprint.pformat`` of each item's dict, one per line (for reading, not parsing)."""

    def __init__(self, file: IO[bytes], **kwargs: Any) -> None:
        super().__init__(**kwargs)
        self.file = file

    def export_item(self, item: Any) -> None:
        text = pprint.pformat(dict(self.get_serialized_fields(item)))
        self.file.write(_as_bytes(text + "\n", self.encoding))


class PythonItemExporter(BaseItemExporter):
    """Items as plain Python: ``export_item`` returns a dict whose nested items are
    dicts too, and whose bytes are text. A base for exporters of other formats."""

    def _configure(self, options: dict[str, Any], dont_fail: bool = False) -> None:
        super()._configure(options, dont_fail)
        if not self.encoding:
            self.encoding = "utf-8"

    def serialize_field(self, field: Mapping[str, Any] | Any, name: str, value: Any) -> Any:
        serializer = field.get("serializer") if field else None
        return serializer(value) if serializer is not None else self._serialize_value(value)

    def _serialize_value(self, value: Any) -> Any:
        if is_item(value):
            return {key: self._serialize_value(inner) for key, inner in ItemAdapter(value).items()}
        if isinstance(value, bytes):
            return value.decode(self.encoding or "utf-8")
        if isinstance(value, str):
            return value
        if _listlike(value):
            return [self._serialize_value(inner) for inner in value]
        return value

    def export_item(self, item: Any) -> dict[str, Any]:
        return dict(self.get_serialized_fields(item))
