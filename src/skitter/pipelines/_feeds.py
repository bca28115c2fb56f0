"""Feed exports: the FEEDS setting turned into files of scraped items.

``FEEDS`` has Scrapy's shape, ``{path: {"format": ..., "overwrite": False,
"encoding": "utf-8", "fields": [...], "indent": None, "item_classes": [...]}}``; every key
is optional and the format defaults from the extension (``.jsonl``/``.jl``/``.ndjson``,
``.json``, ``.csv``). The path may use ``%(name)s`` (the spider) and ``%(time)s``, be a
``file://`` URI, or be ``-``/``stdout:`` for standard output.

Each entry becomes a ``FeedExporter``, which behaves like the last item pipeline, so it
writes exactly the items that survived every user pipeline. ``overwrite=False`` (Scrapy's
``-o``) continues an existing file and ``overwrite=True`` (``-O``) replaces it; a JSON
array is continued by reopening it before its closing bracket (see ``_exporters``).

Writes go through a buffered file, flushed every ``FLUSH_ITEMS`` items or
``FLUSH_SECONDS`` seconds and on close: a crash loses at most that much, and tailing the
file shows progress. Writing is synchronous on the event loop, like Scrapy's: a buffered
write is a memory copy, and a flush lands in the page cache. ``close()`` is synchronous
too, so it completes even inside a cancelled task and the file is always a valid document.
"""

from __future__ import annotations

import codecs
import logging
import sys
from collections.abc import Mapping
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path
from typing import IO, Any
from urllib.parse import urlsplit

from skitter._clock import Clock, SystemClock
from skitter._components import load_object
from skitter._secrets import mask_url
from skitter._types import CrawlContext, StatsSink
from skitter.exceptions import ConfigError
from skitter.pipelines._exporters import (
    CsvExporter,
    ItemExporter,
    JsonExporter,
    JsonLinesExporter,
)

__all__ = ["FEED_FORMATS", "FeedExporter", "FeedOptions", "build_feeds", "parse_feeds"]

log = logging.getLogger("skitter.feeds")

FLUSH_ITEMS = 1000
FLUSH_SECONDS = 1.0

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
        raise ConfigError(f"FEEDS[{_shown(uri)}] must be a dict of options, not {options!r}")
    unknown = set(options) - _OPTIONS
    if unknown:
        raise ConfigError(
            f"FEEDS[{_shown(uri)}]: unsupported option(s) {sorted(map(str, unknown))}; "
            f"skitter knows {sorted(_OPTIONS)}"
        )
    path = _resolve_path(uri, params)
    fmt = options.get("format")
    if fmt is None:
        suffix = path.suffix.lower() if path is not None else ""
        fmt = _BY_EXTENSION.get(suffix)
        if fmt is None:
            raise ConfigError(
                f"FEEDS[{_shown(uri)}]: cannot tell the format from the file name; add "
                f"'format': one of {sorted(FEED_FORMATS)}"
            )
    fmt = str(fmt).lower()
    if fmt not in FEED_FORMATS:
        raise ConfigError(
            f"FEEDS[{_shown(uri)}]: unknown format {fmt!r}; use one of {sorted(FEED_FORMATS)}"
        )
    encoding = options.get("encoding") or default_encoding
    try:
        encoding = codecs.lookup(encoding).name
    except LookupError:
        raise ConfigError(f"FEEDS[{_shown(uri)}]: unknown encoding {encoding!r}") from None
    fields = options.get("fields")
    if fields is not None and (
        isinstance(fields, str) or not all(isinstance(name, str) for name in fields)
    ):
        raise ConfigError(f"FEEDS[{_shown(uri)}]: 'fields' must be a list of names, not {fields!r}")
    indent = options.get("indent")
    if indent is not None and (not isinstance(indent, int) or indent < 0):
        raise ConfigError(f"FEEDS[{_shown(uri)}]: 'indent' must be a whole number >= 0 or None")
    classes = tuple(load_object(c) for c in options.get("item_classes") or ())
    if not all(isinstance(c, type) for c in classes):
        raise ConfigError(f"FEEDS[{_shown(uri)}]: 'item_classes' must name classes")
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


def _shown(uri: str) -> str:
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
                f"FEEDS[{_shown(uri)}]: bad placeholder ({exc}); use %(name)s or %(time)s"
            ) from None
    if uri.startswith("file://"):
        host = urlsplit(uri).netloc
        if host not in ("", "localhost"):
            raise ConfigError(
                f"FEEDS[{_shown(uri)}]: a file:// URI names a local file (file:///path), "
                f"not one on {mask_url('file://' + host)}"
            )
        uri = uri.removeprefix(f"file://{host}")
    elif "://" in uri:
        raise ConfigError(f"FEEDS[{_shown(uri)}]: only local files and stdout are supported")
    if not uri:
        raise ConfigError("FEEDS: an empty path")
    return Path(uri).expanduser()


class FeedExporter:
    """One feed: a file, an exporter and its counters. Quacks like an item pipeline."""

    def __init__(
        self, options: FeedOptions, *, stats: StatsSink | None = None, clock: Clock | None = None
    ) -> None:
        self.options = options
        self.item_count = 0
        self._stats = stats
        self._clock: Clock = clock or SystemClock()
        self._file: IO[bytes] | None = None
        self._exporter: ItemExporter | None = None
        self._closed = False
        self._unflushed = 0
        self._flushed_at = 0.0
        self._count_key = f"feedexport/item_count/{options.format}"
        #: When resuming a job: the size the file had at the job's last checkpoint.
        #: Everything after it was written for tasks whose completion was not recorded,
        #: which will be crawled again, so it is cut off on open.
        self.resume_at: int | None = None

    # -- pipeline face ----------------------------------------------------------------
    def open_spider(self, spider: Any) -> None:
        self.open()

    def process_item(self, item: Any, spider: Any) -> Any:
        classes = self.options.item_classes
        if classes and not isinstance(item, classes):
            return item
        exporter = self._exporter
        if exporter is None:
            raise RuntimeError(f"{self!r} is not open")
        exporter.export(item)
        self.item_count += 1
        if self._stats is not None:
            self._stats.inc(self._count_key)
        self._unflushed += 1
        if self._unflushed >= FLUSH_ITEMS or self._clock.monotonic() - self._flushed_at >= (
            FLUSH_SECONDS
        ):
            self.flush()
        return item

    def close_spider(self, spider: Any) -> None:
        self.close()

    # -- file -------------------------------------------------------------------------
    def open(self) -> None:
        """Open (or continue) the file and start the document."""
        opts = self.options
        path = opts.path
        existing = False
        if path is None:
            file: IO[bytes] = sys.stdout.buffer
        else:
            try:
                path.parent.mkdir(parents=True, exist_ok=True)
                existing = not opts.overwrite and path.is_file() and path.stat().st_size > 0
                file = open(path, "r+b" if existing else "wb", buffering=1 << 16)  # noqa: SIM115
                if existing and self.resume_at is not None:
                    file.truncate(min(self.resume_at, path.stat().st_size))
                    existing = self.resume_at > 0
            except OSError as exc:
                raise ConfigError(f"cannot open feed {_shown(opts.uri)}: {exc}") from exc
        exporter = FEED_FORMATS[opts.format](
            file, encoding=opts.encoding, fields=opts.fields, indent=opts.indent
        )
        try:
            exporter.start(existing)
        except BaseException:
            if path is not None:
                file.close()
            raise
        self._file, self._exporter = file, exporter
        self._flushed_at = self._clock.monotonic()

    def flush(self) -> None:
        if self._file is not None and not self._closed:
            self._file.flush()
        self._unflushed = 0
        self._flushed_at = self._clock.monotonic()

    @property
    def key(self) -> str:
        """How a job's checkpoint names this feed."""
        return str(self.options.path or self.options.uri)

    def position(self) -> int | None:
        """The file's size once flushed: what a job checkpoint records (None for stdout,
        or before the file is open)."""
        if self._file is None or self.options.path is None:
            return None
        if self._closed:
            return self.options.path.stat().st_size
        self._file.flush()
        return self._file.tell()

    def close(self) -> None:
        """Finish the document and close the file; safe to call twice, never skipped."""
        if self._closed or self._exporter is None or self._file is None:
            self._closed = True
            return
        self._closed = True
        opts = self.options
        ok = False
        try:
            self._exporter.finish()
            self._file.flush()
            ok = True
        finally:
            if opts.path is not None:
                self._file.close()
            key = "success_count" if ok else "failed_count"
            if self._stats is not None:
                self._stats.inc(f"feedexport/{key}/{opts.format}")
        log.info(
            "Stored %s feed (%d items) in: %s", opts.format, self.item_count, opts.path or "stdout"
        )

    def __repr__(self) -> str:
        return f"<FeedExporter {self.options.format} {mask_url(self.options.uri)}>"


def build_feeds(crawler: CrawlContext) -> list[FeedExporter]:
    """A FeedExporter for every entry of the FEEDS setting."""
    spider = getattr(crawler, "spider", None)
    settings = crawler.settings
    options = parse_feeds(
        settings["FEEDS"],
        spider_name=str(getattr(spider, "name", "") or ""),
        encoding=settings["FEED_EXPORT_ENCODING"],
    )
    clock = getattr(crawler, "clock", None)
    return [FeedExporter(opt, stats=crawler.stats, clock=clock) for opt in options]
