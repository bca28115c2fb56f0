"""The FEEDS setting, validated: one ``FeedOptions`` per feed.

``FEEDS`` has Scrapy's shape, ``{path: {"format": ..., "overwrite": False,
"encoding": "utf-8", "fields": [...], "indent": None, "item_classes": [...]}}``; every key
is optional and the format defaults from the extension (``.jsonl``/``.jl``/``.ndjson``,
``.json``, ``.csv``). The path may use ``%(name)s`` (the spider) and ``%(time)s``, be a
``file://`` URI, or be ``-``/``stdout:`` for standard output.

Every problem is a ``ConfigError`` naming the entry and what is wrong with it, raised
before the crawl starts.
"""

from __future__ import annotations

import codecs
from collections.abc import Mapping
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

from skitter._components import load_object
from skitter._secrets import mask_url
from skitter.exceptions import ConfigError
from skitter.pipelines._exporters import (
    CsvExporter,
    ItemExporter,
    JsonExporter,
    JsonLinesExporter,
)

__all__ = ["FEED_FORMATS", "FeedOptions", "parse_feeds"]

#: Format names (Scrapy's, plus common aliases) to exporter classes.
FEED_FORMATS: Mapping[str, type[ItemExporter]] = {
    "jsonl": JsonLinesExporter,
    "jsonlines": JsonLinesExporter,
    "jl": JsonLinesExporter,
    "ndjson": JsonLinesExporter,
    "json": JsonExporter,
    "csv": CsvExporter,
}
_BY_EXTENSION = {".jsonl": "jsonl", ".jl": "jsonl", ".ndjson": "jsonl", ".json": "json"}
_BY_EXTENSION[".csv"] = "csv"
_OPTIONS = frozenset({"format", "overwrite", "encoding", "fields", "indent", "item_classes"})
_STDOUT = ("-", "stdout:")


@dataclass(frozen=True, slots=True)
class FeedOptions:
    """One validated FEEDS entry. ``path`` None means standard output."""

    uri: str
    path: Path | None
    format: str
    overwrite: bool = False
    encoding: str = "utf-8"
    fields: tuple[str, ...] | None = None
    indent: int | None = None
    item_classes: tuple[type, ...] = ()


def parse_feeds(
    feeds: Mapping[Any, Any],
    *,
    spider_name: str = "",
    now: datetime | None = None,
    encoding: str | None = None,
) -> list[FeedOptions]:
    """Validate FEEDS; raises ConfigError naming the entry and what is wrong with it."""
    if not isinstance(feeds, Mapping):
        raise ConfigError(f"FEEDS must be a dict {{path: options}}, not {type(feeds).__name__}")
    stamp = (now or datetime.now(tz=UTC)).replace(microsecond=0).isoformat().replace(":", "-")
    params = {"name": spider_name, "time": stamp}
    default = encoding or "utf-8"
    return [_parse_one(str(uri), options, params, default) for uri, options in feeds.items()]


def _parse_one(
    uri: str, options: Any, params: Mapping[str, str], default_encoding: str
) -> FeedOptions:
    if options is None:
        options = {}
    if not isinstance(options, Mapping):
        raise ConfigError(f"FEEDS[{shown(uri)}] must be a dict of options, not {options!r}")
    unknown = set(options) - _OPTIONS
    if unknown:
        raise ConfigError(
            f"FEEDS[{shown(uri)}]: unsupported option(s) {sorted(map(str, unknown))}; "
            f"skitter knows {sorted(_OPTIONS)}"
        )
    path = _resolve_path(uri, params)
    fmt = options.get("format")
    if fmt is None:
        suffix = path.suffix.lower() if path is not None else ""
        fmt = _BY_EXTENSION.get(suffix)
        if fmt is None:
            raise ConfigError(
                f"FEEDS[{shown(uri)}]: cannot tell the format from the file name; add "
                f"'format': one of {sorted(FEED_FORMATS)}"
            )
    fmt = str(fmt).lower()
    if fmt not in FEED_FORMATS:
        raise ConfigError(
            f"FEEDS[{shown(uri)}]: unknown format {fmt!r}; use one of {sorted(FEED_FORMATS)}"
        )
    encoding = options.get("encoding") or default_encoding
    try:
        encoding = codecs.lookup(encoding).name
    except LookupError:
        raise ConfigError(f"FEEDS[{shown(uri)}]: unknown encoding {encoding!r}") from None
    fields = options.get("fields")
    if fields is not None and (
        isinstance(fields, str) or not all(isinstance(name, str) for name in fields)
    ):
        raise ConfigError(f"FEEDS[{shown(uri)}]: 'fields' must be a list of names, not {fields!r}")
    indent = options.get("indent")
    if indent is not None and (not isinstance(indent, int) or indent < 0):
        raise ConfigError(f"FEEDS[{shown(uri)}]: 'indent' must be a whole number >= 0 or None")
    classes = tuple(load_object(c) for c in options.get("item_classes") or ())
    if not all(isinstance(c, type) for c in classes):
        raise ConfigError(f"FEEDS[{shown(uri)}]: 'item_classes' must name classes")
    return FeedOptions(
        uri=uri,
        path=path,
        format=FEED_FORMATS[fmt].format,
        overwrite=bool(options.get("overwrite", False)),
        encoding=encoding,
        fields=tuple(fields) if fields else None,
        indent=indent,
        item_classes=classes,
    )


def shown(uri: str) -> str:
    """A feed URI as messages show it: with its password masked (an ``sftp://user:pass@``
    URI is refused, and the refusal must not print the password)."""
    return repr(mask_url(uri))


def _resolve_path(uri: str, params: Mapping[str, str]) -> Path | None:
    if uri in _STDOUT:
        return None
    if "%(" in uri:
        try:
            uri = uri % params
        except (KeyError, ValueError, TypeError) as exc:
            raise ConfigError(
                f"FEEDS[{shown(uri)}]: bad placeholder ({exc}); use %(name)s or %(time)s"
            ) from None
    if uri.startswith("file://"):
        host = urlsplit(uri).netloc
        if host not in ("", "localhost"):
            raise ConfigError(
                f"FEEDS[{shown(uri)}]: a file:// URI names a local file (file:///path), "
                f"not one on {mask_url('file://' + host)}"
            )
        uri = uri.removeprefix(f"file://{host}")
    elif "://" in uri:
        raise ConfigError(f"FEEDS[{shown(uri)}]: only local files and stdout are supported")
    if not uri:
        raise ConfigError("FEEDS: an empty path")
    return Path(uri).expanduser()
