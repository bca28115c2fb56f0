"""The feed formats beside JSON and CSV: XML (Scrapy's layout), marshal and pickle.

XML follows Scrapy's ``XmlItemExporter``: ``<items>`` holding one ``<item>`` per item,
one element per field, a list as repeated ``<value>`` elements and a dict (or a nested
item) as child elements. ``indent=None`` writes no line breaks, ``0`` puts each item on
its own line, more indents every level. Like a JSON array, an existing file is continued
by reopening it before its ``</items>``.

Scrapy writes whatever the item holds, so one form feed (``\x0c``, common in pages) makes
the whole file unreadable. Here every document is XML 1.0, and every value comes back
whole, in two documented forms beside Scrapy's:

- text holding a character XML 1.0 cannot carry (the C0 controls but tab and line
  breaks, lone surrogates, U+FFFE, U+FFFF) is written as a JSON string, marked
  ``encoding="json"``: ``<note encoding="json">"page\fbreak"</note>``, read back with
  ``json.loads(element.text)``. A carriage return, which a parser would turn into a line
  feed, is written ``&#13;``;
- a field (or dict key) that is not an XML name is written ``<field name="2nd price">``.

marshal and pickle exist because Scrapy has them; they are written only when a feed asks
for them by name (never from a file extension), with a warning: pickle runs code when it
is read back, and both can be read only by Python. marshal holds Python's basic types
only: an item with anything else (a ``Decimal``, a ``datetime``) cannot be written, and
the feed fails the crawl (``FeedExporter``) rather than leave it out.
"""

from __future__ import annotations

import json
import logging
import marshal
import pickle
import re
from typing import IO, Any
from xml.sax.saxutils import escape, quoteattr

from skitter.exceptions import ConfigError
from skitter.items import exported_dict, is_item
from skitter.pipelines._exporters import ItemExporter

__all__ = ["MarshalExporter", "PickleExporter", "XmlExporter"]

log = logging.getLogger("skitter.feeds")

#: Names written as elements; any other is ``<field name="...">``. No colon: a prefix
#: would need a namespace declaration.
_NAME = re.compile(r"^[A-Za-z_][A-Za-z0-9_.\-]*$")
#: What XML 1.0 cannot carry at all (its ``Char`` production, negated).
_NOT_XML = re.compile("[^\t\n\r\x20-\ud7ff\ue000-\ufffd\U00010000-\U0010ffff]")
_ESCAPES = {"\r": "&#13;"}  # kept as a carriage return: a parser reads a raw one as \n
#: In an attribute a parser turns raw tabs and line breaks into spaces.
_ATTRIBUTE_ESCAPES = {"\t": "&#9;", "\n": "&#10;", "\r": "&#13;"}
_CLOSE = b"</items>"


class XmlExporter(ItemExporter):
    """Scrapy's XML layout: ``<?xml ...?>`` ``<items><item><field>..</field></item></items>``."""

    format = "xml"

    def start(self, existing: bool) -> None:
        self._check_ascii_compatible()
        if existing and self._reopen():
            return
        head = f'<?xml version="1.0" encoding="{self.encoding}"?>\n<items>'
        self.file.write(head.encode(self.encoding))

    def _reopen(self) -> bool:
        """Go on inside an existing document: before its ``</items>``, or at its end if it
        was cut back to a checkpoint. False for a blank file (started afresh)."""
        file = self.file
        end = file.seek(0, 2)
        if end == 0:
            return False
        file.seek(0)
        head = file.read(64).lstrip()
        if not head.startswith((b"<?xml", b"<items")):
            name = getattr(file, "name", "the file")
            raise ConfigError(
                f"cannot append to {name}: it is not an XML feed; overwrite it (-O, or "
                "'overwrite': True in FEEDS)"
            )
        keep = _position_of_close(file, end)
        file.seek(keep)
        file.truncate()
        return True

    def export(self, item: Any) -> None:
        data = self._select(item)
        parts: list[str] = []
        self._newline(parts, 1, item_start=True)
        parts.append("<item>")
        for name, value in data.items():
            self._field(parts, str(name), value, 2)
        self._newline(parts, 1)
        parts.append("</item>")
        self.file.write("".join(parts).encode(self.encoding, "xmlcharrefreplace"))

    def finish(self) -> None:
        self.file.write(b"\n</items>" if self.indent is not None else _CLOSE)

    def _newline(self, parts: list[str], depth: int, *, item_start: bool = False) -> None:
        indent = self.indent
        if indent is None or (indent == 0 and not item_start):
            return
        parts.append("\n" + " " * (indent * depth))

    def _field(self, parts: list[str], name: str, value: Any, depth: int) -> None:
        tag, attributes = _tag(name)
        self._newline(parts, depth)
        if is_item(value) and not isinstance(value, dict):
            value = exported_dict(value)
        if isinstance(value, dict):
            parts.append(f"<{tag}{attributes}>")
            for key, inner in value.items():
                self._field(parts, str(key), inner, depth + 1)
            self._newline(parts, depth)
        elif isinstance(value, list | tuple | set | frozenset):
            parts.append(f"<{tag}{attributes}>")
            for inner in value:
                self._field(parts, "value", inner, depth + 1)
            self._newline(parts, depth)
        else:
            text = _text(value)
            if _NOT_XML.search(text):
                attributes += ' encoding="json"'
                text = _json_text(text)
            parts.append(f"<{tag}{attributes}>{escape(text, _ESCAPES)}")
        parts.append(f"</{tag}>")


def _tag(name: str) -> tuple[str, str]:
    """The element name and attributes for a field: itself, or ``field`` with the name
    in an attribute when it is not an XML name (ValueError if even that cannot hold it)."""
    if _NAME.match(name):
        return name, ""
    if _NOT_XML.search(name):
        raise ValueError(f"field name {name!r} holds a character XML 1.0 cannot carry")
    return "field", f" name={quoteattr(name, _ATTRIBUTE_ESCAPES)}"


def _json_text(text: str) -> str:
    """``text`` as a JSON string literal without a character XML 1.0 cannot carry: JSON
    escapes the controls itself, the rest (U+FFFE, U+FFFF, lone surrogates) as \\uXXXX."""
    return _NOT_XML.sub(lambda m: f"\\u{ord(m.group()):04x}", json.dumps(text, ensure_ascii=False))


def _text(value: Any) -> str:
    if value is None:
        return ""
    if isinstance(value, bytes | bytearray):
        return bytes(value).decode("utf-8", "backslashreplace")
    return str(value)


def _position_of_close(file: IO[bytes], end: int) -> int:
    """Where the final ``</items>`` (and the line break before it) starts; the end of
    the content for a document left open (a crash, or cut back to a checkpoint)."""
    start = max(0, end - 256)
    file.seek(start)
    chunk = file.read(end - start).rstrip()
    if chunk.endswith(_CLOSE):
        chunk = chunk[: -len(_CLOSE)].rstrip(b"\n")
    return start + len(chunk)


class _PythonExporter(ItemExporter):
    """One serialized dict per item, back to back: appendable like JSON lines."""

    def start(self, existing: bool) -> None:
        super().start(existing)
        if not existing:
            log.warning(
                "Feed format %s can be read only by Python%s",
                self.format,
                " and runs code when it is read: read only files you wrote"
                if self.format == "pickle"
                else "",
            )

    def _plain(self, item: Any) -> dict[str, Any]:
        data = self._select(item)
        return {key: _plain(value) for key, value in data.items()}


def _plain(value: Any) -> Any:
    if is_item(value) and not isinstance(value, dict):
        value = exported_dict(value)
    if isinstance(value, dict):
        return {key: _plain(inner) for key, inner in value.items()}
    if isinstance(value, list | tuple):
        return type(value)(_plain(inner) for inner in value)
    return value


class MarshalExporter(_PythonExporter):
    """``marshal.dumps`` of each item's dict (only Python's basic types)."""

    format = "marshal"

    def export(self, item: Any) -> None:
        self.file.write(marshal.dumps(self._plain(item)))


class PickleExporter(_PythonExporter):
    """``pickle.dumps`` of each item's dict (protocol 4, as Scrapy)."""

    format = "pickle"

    def export(self, item: Any) -> None:
        self.file.write(pickle.dumps(self._plain(item), protocol=4))
