"""The feed registries: ``FEED_EXPORTERS`` (format -> exporter) and ``FEED_STORAGES``
(URI scheme -> storage), each the built-in table with the user's merged over it.

As in Scrapy, a user's entry adds a format or scheme, replaces a built-in one, or with
``None`` switches one off. The built-ins are entries of the same tables (dotted paths,
so an optional storage's library is imported only by a feed that uses it).

A user's class has Scrapy's API, which differs from skitter's own:

- an exporter (``skitter.exporters.BaseItemExporter``'s API, built with the feed's
  ``fields_to_export``, ``encoding``, ``indent`` and its ``item_export_kwargs``, through
  its ``from_crawler`` when it has one) is run
  through ``ScrapyExporter``, which calls ``start_exporting``, ``export_item`` and
  ``finish_exporting`` as Scrapy's feed exporter does;
- a storage (Scrapy's ``IFeedStorage``: built with the target URI and
  ``feed_options``, ``open(spider)`` returning a binary file, ``store(file)``, which may
  return an awaitable) is run through ``ScrapyStorage``: the feed is staged in a local
  file as for a built-in remote storage, and handed to the storage when finished.

Every problem (a path that does not load, a class of neither API, a switched-off format
or scheme a feed uses) is a ``ConfigError`` before the crawl starts.
"""

from __future__ import annotations

import asyncio
import inspect
import logging
import shutil
import warnings
from collections.abc import Mapping
from pathlib import Path
from typing import IO, Any

from skitter._components import load_object
from skitter.exceptions import ConfigError, ScrapyDeprecationWarning
from skitter.pipelines._exporters import ItemExporter

__all__ = [
    "FEED_EXPORTERS_BASE",
    "FEED_STORAGES_BASE",
    "ScrapyExporter",
    "ScrapyStorage",
    "exporter_table",
    "feeds_setting",
    "storage_table",
]

log = logging.getLogger("skitter.feeds")

_HERE = "skitter.pipelines."
#: The built-in formats (Scrapy's names, plus common aliases of JSON lines).
FEED_EXPORTERS_BASE: Mapping[str, str] = {
    "jsonl": _HERE + "_exporters.JsonLinesExporter",
    "jsonlines": _HERE + "_exporters.JsonLinesExporter",
    "jl": _HERE + "_exporters.JsonLinesExporter",
    "ndjson": _HERE + "_exporters.JsonLinesExporter",
    "json": _HERE + "_exporters.JsonExporter",
    "csv": _HERE + "_exporters.CsvExporter",
    "xml": _HERE + "_more_exporters.XmlExporter",
    "marshal": _HERE + "_more_exporters.MarshalExporter",
    "pickle": _HERE + "_more_exporters.PickleExporter",
}
#: The built-in storages of staged feeds; local files and stdout: are written in place.
FEED_STORAGES_BASE: Mapping[str, str] = {
    "file": _HERE + "_feed_storage.LocalFeedStorage",
    "s3": _HERE + "_s3.S3FeedStorage",
    "gs": _HERE + "_gcs.GcsFeedStorage",
    "ftp": _HERE + "_ftp.FtpFeedStorage",
}
#: Scrapy's own classes, which a ported project may name: the built-in of that scheme.
_SCRAPY_STORAGES = {
    f"{package}.extensions.feedexport.{name}FeedStorage": scheme
    for package in ("scrapy", "skitter")
    for name, scheme in (("File", "file"), ("S3", "s3"), ("GCS", "gs"), ("FTP", "ftp"))
}


def _merged(base: Mapping[str, str], custom: Any, setting: str) -> dict[str, Any]:
    if custom is None:
        custom = {}
    if not isinstance(custom, Mapping):
        raise ConfigError(f"{setting} must be a dict, not {type(custom).__name__}")
    table: dict[str, Any] = dict(base)
    for key, value in custom.items():
        if not isinstance(key, str) or not key:
            raise ConfigError(f"{setting}: keys are names, not {key!r}")
        table[key.lower()] = value
    return table


def exporter_table(settings: Mapping[str, Any]) -> dict[str, Any]:
    """Format -> exporter class path (or class; None: switched off)."""
    return _merged(FEED_EXPORTERS_BASE, settings.get("FEED_EXPORTERS"), "FEED_EXPORTERS")


def storage_table(settings: Mapping[str, Any]) -> dict[str, Any]:
    """Scheme -> storage class path (or class; None: switched off)."""
    table = _merged(FEED_STORAGES_BASE, settings.get("FEED_STORAGES"), "FEED_STORAGES")
    for scheme, value in table.items():
        if isinstance(value, str) and value in _SCRAPY_STORAGES:
            table[scheme] = FEED_STORAGES_BASE[_SCRAPY_STORAGES[value]]
    return table


def feeds_setting(settings: Mapping[str, Any]) -> dict[Any, Any]:
    """FEEDS, with the feed of Scrapy's older ``FEED_URI`` / ``FEED_FORMAT`` first when
    ``FEED_URI`` is set (with a deprecation warning, as Scrapy gives); a FEEDS entry of
    the same URI wins. ``FEED_FORMAT`` alone does nothing, as in Scrapy."""
    feeds = dict(settings.get("FEEDS") or {})
    uri = settings.get("FEED_URI")
    if not uri:
        return feeds
    fmt = settings.get("FEED_FORMAT") or "jsonlines"
    message = (
        "FEED_URI and FEED_FORMAT are deprecated (in Scrapy too): write "
        f"FEEDS = {{{str(uri)!r}: {{'format': {fmt!r}}}}} instead"
    )
    warnings.warn(message, ScrapyDeprecationWarning, stacklevel=2)
    log.warning(message)
    return {str(uri): {"format": fmt}, **feeds}


def builtin_storage(scheme: str, table: Mapping[str, Any]) -> bool:
    """Whether ``scheme`` is served by skitter's own storage of that scheme."""
    return scheme in FEED_STORAGES_BASE and table.get(scheme) == FEED_STORAGES_BASE[scheme]


def exporter_class(fmt: str, table: Mapping[str, Any], where: str) -> type:
    """The class registered for ``fmt``: an ``ItemExporter`` or a Scrapy-API exporter."""
    value = table.get(fmt)
    if value is None:
        known = sorted(k for k, v in table.items() if v is not None)
        what = "format switched off by FEED_EXPORTERS" if fmt in table else "unknown format"
        raise ConfigError(f"{where}: {what} {fmt!r}; use one of {known}")
    cls = load_object(value)
    if not isinstance(cls, type) or not (
        issubclass(cls, ItemExporter) or callable(getattr(cls, "export_item", None))
    ):
        raise ConfigError(
            f"FEED_EXPORTERS[{fmt!r}]: {value!r} is not an item exporter (a class with "
            "export_item, like skitter.exporters.BaseItemExporter's subclasses)"
        )
    return cls


def storage_class(scheme: str, table: Mapping[str, Any], where: str) -> type:
    """The Scrapy-API storage class registered for a scheme skitter does not serve."""
    cls = load_object(table[scheme])
    if not isinstance(cls, type) or not callable(getattr(cls, "store", None)):
        raise ConfigError(
            f"FEED_STORAGES[{scheme!r}]: {table[scheme]!r} is not a feed storage (a class "
            f"with open(spider) and store(file), as Scrapy's); used by {where}"
        )
    return cls


class ScrapyExporter(ItemExporter):
    """A Scrapy-API exporter in a skitter feed: built on the feed's file, started,
    given each item, finished, as Scrapy's feed exporter does. A continued file (``-o``)
    is appended to, as Scrapy appends."""

    format = "custom"

    def __init__(
        self,
        file: IO[bytes],
        *,
        exporter: type,
        name: str,
        encoding: str = "utf-8",
        fields: Any = None,
        indent: int | None = None,
        kwargs: Mapping[str, Any] | None = None,
        crawler: Any = None,
    ) -> None:
        super().__init__(file, encoding=encoding, indent=indent)
        self.format = name  # type: ignore[misc]  # a per-feed name: the class's is generic
        options = dict(kwargs or {})
        options.update(fields_to_export=list(fields) if fields else None)
        options.update(encoding=encoding, indent=indent)
        from_crawler = getattr(exporter, "from_crawler", None)
        if crawler is not None and from_crawler is not None:  # as Scrapy builds it
            self.scrapy = from_crawler(crawler, file, **options)
        else:
            self.scrapy = exporter(file, **options)

    def start(self, existing: bool) -> None:
        super().start(existing)
        self.scrapy.start_exporting()

    def export(self, item: Any) -> None:
        self.scrapy.export_item(item)

    def finish(self) -> None:
        self.scrapy.finish_exporting()

    def unwritable(self, item: Any, exc: Exception) -> str:
        return (
            f"cannot write a {type(item).__name__} item as {self.format} "
            f"({type(self.scrapy).__name__}): {type(exc).__name__}: {exc}"
        )


class ScrapyStorage:
    """A Scrapy-API storage behind skitter's ``FeedStorage``: each finished file is
    copied into what ``open(spider)`` gives and handed to ``store``, which runs in a
    thread (Scrapy's blocking storages upload there) unless it returns an awaitable."""

    def __init__(self, cls: type, raw: Mapping[str, Any], spider: Any) -> None:
        self.name = cls.__name__
        self._cls = cls
        self._raw = dict(raw)
        self._spider = spider

    def _build(self, target: str) -> Any:
        crawler = getattr(self._spider, "crawler", None)
        from_crawler = getattr(self._cls, "from_crawler", None)
        if crawler is not None and from_crawler is not None:  # Scrapy's build_from_crawler
            return from_crawler(crawler, target, feed_options=self._raw)
        try:
            return self._cls(target, feed_options=self._raw)
        except TypeError:  # storages written before Scrapy 2.4 take the URI alone
            return self._cls(target)

    async def store(self, source: Path, target: str) -> None:
        result = await asyncio.to_thread(self._store, source, target)
        if inspect.isawaitable(result):
            await result

    def _store(self, source: Path, target: str) -> Any:
        storage = self._build(target)
        file = storage.open(self._spider)
        with open(source, "rb") as reader:
            shutil.copyfileobj(reader, file)
        return storage.store(file)

    async def aclose(self) -> None:
        return None
