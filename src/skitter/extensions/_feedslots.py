"""Scrapy's feed-export extension object, ``FeedExporter``, for code written on it.

skitter writes a crawl's FEEDS itself, as the last item pipeline (``skitter.pipelines``:
resumable, flushed, staged uploads with retries), and does not build this extension in a
crawl. This class is Scrapy's API for programs that build it from a crawler and drive it
(``open_spider``, ``item_scraped``, ``close_spider``), subclass it, or read its
``slots``: each FEEDS entry is a ``FeedSlot`` holding a storage of Scrapy's API
(``open(spider)`` gives the file, ``store(file)`` puts it in place: the storages of
``skitter.extensions.feedexport``, or FEED_STORAGES' own), an exporter of Scrapy's API
(``skitter.exporters``, or FEED_EXPORTERS' own), and the post-processing chain
(``PostProcessingManager``). A batch (``batch_item_count``) is a new slot on a new URI.

What it refuses, it refuses as Scrapy does: ``NotConfigured`` from the constructor,
after an error line naming the cause (an unknown storage scheme or format, a storage
that is switched off, a batched URI without ``%(batch_id)d`` or ``%(batch_time)s``).
"""

from __future__ import annotations

import inspect
import logging
import re
from collections.abc import Callable, Mapping
from datetime import UTC, datetime
from pathlib import Path, PureWindowsPath
from typing import IO, Any
from urllib.parse import urlparse

from skitter._components import load_object
from skitter._tasks import TaskSet
from skitter.exceptions import NotConfigured
from skitter.extensions import _postprocessing
from skitter.extensions._postprocessing import SHORT_NAMES, PostProcessingManager
from skitter.settings import FeedSettings
from skitter.signals import (
    feed_exporter_closed,
    feed_slot_closed,
    item_scraped,
    spider_closed,
    spider_opened,
)
from skitter.utils.conf import feed_complete_default_values_from_settings
from skitter.utils.misc import build_from_crawler

__all__ = ["FeedExporter", "FeedSlot", "ItemFilter", "apply_uri_params"]

log = logging.getLogger("skitter.extensions.feedexport")

_PACKAGE = "skitter."
#: Scrapy's built-in formats, on skitter's Scrapy-API exporters.
_EXPORTERS = {
    name: f"{_PACKAGE}exporters.{cls}ItemExporter"
    for name, cls in (
        ("json", "Json"), ("jsonlines", "JsonLines"), ("jsonl", "JsonLines"),
        ("jl", "JsonLines"), ("csv", "Csv"), ("xml", "Xml"), ("marshal", "Marshal"),
        ("pickle", "Pickle"),
    )
}  # fmt: skip
#: Scrapy's built-in storages by URI scheme ("" is a plain path).
_STORAGES = {
    scheme: f"{_PACKAGE}extensions.feedexport.{cls}FeedStorage"
    for scheme, cls in (
        ("", "File"), ("file", "File"), ("stdout", "Stdout"), ("s3", "S3"), ("gs", "GCS"),
        ("ftp", "FTP"), ("ftps", "FTP"),
    )
}  # fmt: skip
#: A ``%(name)s`` placeholder, with the flags, width and precision printf allows.
_PLACEHOLDER = re.compile(r"%\([^)]+\)[-+ #0]*(?:\d+|\*)?(?:\.(?:\d+|\*))?[diouxXeEfFgGcrsa]")
_BATCH_MARK = re.compile(r"%\(batch_time\)s|%\(batch_id\)")

UriParams = Callable[[dict[str, Any], Any], dict[str, Any] | None]


def apply_uri_params(uri_template: str, uri_params: Mapping[str, Any]) -> str:
    """``uri_template`` with its ``%(name)s`` placeholders filled from ``uri_params``;
    every other ``%`` stays as it is, so that a percent-encoded URI (``%20`` in a path,
    ``%23`` in an FTP password) reaches the storage unchanged."""
    escaped: list[str] = []
    end = 0
    for match in _PLACEHOLDER.finditer(uri_template):
        escaped += [uri_template[end : match.start()].replace("%", "%%"), match.group(0)]
        end = match.end()
    escaped.append(uri_template[end:].replace("%", "%%"))
    return "".join(escaped) % uri_params


class ItemFilter:
    """Which items a feed takes: with ``item_classes`` in the feed's options, instances
    of those classes (classes or their paths); otherwise every item. A feed's
    ``item_filter`` option names a subclass with its own ``accepts``."""

    def __init__(self, feed_options: Mapping[str, Any] | None) -> None:
        self.feed_options = feed_options
        names = (feed_options or {}).get("item_classes") or ()
        self.item_classes: tuple[type, ...] = tuple(load_object(name) for name in names)

    def accepts(self, item: Any) -> bool:
        """Whether the feed exports ``item``."""
        return not self.item_classes or isinstance(item, self.item_classes)


class FeedSlot:
    """One feed file being written: its storage, its exporter once started, and the
    count of items it took. The file is opened on the first item (or, for an empty feed
    that is stored anyway, when the feed closes)."""

    def __init__(
        self,
        storage: Any,
        uri: str,
        format: str,
        store_empty: bool,
        batch_id: int,
        uri_template: str,
        filter: ItemFilter,
        feed_options: dict[str, Any],
        spider: Any,
        exporters: Mapping[str, type],
        settings: Any,
        crawler: Any,
    ) -> None:
        self.storage = storage
        self.uri, self.uri_template, self.format = uri, uri_template, format
        self.store_empty, self.batch_id, self.filter = store_empty, batch_id, filter
        self.feed_options, self.spider, self.exporters = feed_options, spider, exporters
        self.settings, self.crawler = settings, crawler
        self.file: IO[bytes] | None = None
        self.exporter: Any = None
        self.itemcount = 0
        self._exporting = False

    def start_exporting(self) -> None:
        """Open the file (through the post-processing chain) and start the document,
        once."""
        if self.exporter is None:
            file = self.storage.open(self.spider)
            if "postprocessing" in self.feed_options:
                plugins = [_plugin(name) for name in self.feed_options["postprocessing"]]
                file = PostProcessingManager(plugins, file, self.feed_options)
            self.file = file
            options = self.feed_options
            self.exporter = self._get_exporter(
                file,
                options["format"],
                fields_to_export=options["fields"],
                encoding=options["encoding"],
                indent=options["indent"],
                **options["item_export_kwargs"],
            )
        if not self._exporting:
            self.exporter.start_exporting()
            self._exporting = True

    def _get_exporter(self, file: IO[bytes], format_: str, *args: Any, **kwargs: Any) -> Any:
        return build_from_crawler(self.exporters[format_], self.crawler, file, *args, **kwargs)

    def finish_exporting(self) -> None:
        """End the document (once per start)."""
        if self._exporting:
            self.exporter.finish_exporting()
            self._exporting = False


class FeedExporter:
    """Scrapy's feed-export extension (see the module's docstring)."""

    @classmethod
    def from_crawler(cls, crawler: Any) -> FeedExporter:
        exporter = cls(crawler)
        crawler.signals.connect(exporter.open_spider, signal=spider_opened)
        crawler.signals.connect(exporter.close_spider, signal=spider_closed)
        crawler.signals.connect(exporter.item_scraped, signal=item_scraped)
        return exporter

    def __init__(self, crawler: Any) -> None:
        self.crawler = crawler
        self.settings = crawler.settings
        self.feeds: dict[str, dict[str, Any]] = {}
        self.filters: dict[str, ItemFilter] = {}
        self.slots: list[FeedSlot] = []
        self._closing = TaskSet()
        view = self.settings.view(FeedSettings)
        if not view.feeds and not view.feed_uri:
            raise NotConfigured("no FEEDS")
        entries: dict[Any, Any] = {}
        if view.feed_uri:  # Scrapy's older single feed, behind FEEDS' own entries
            entries[view.feed_uri] = {"format": view.feed_format}
        entries.update(view.feeds or {})
        for key, options in entries.items():
            uri = str(key.absolute()) if isinstance(key, Path) else str(key)
            self.feeds[uri] = feed_complete_default_values_from_settings(
                options or {}, self.settings
            )
            self.filters[uri] = self._load_filter(options or {})
        self.storages = _loaded(view.feed_storages, _STORAGES)
        self.exporters = _loaded(view.feed_exporters, _EXPORTERS)
        for uri, options in self.feeds.items():
            if not (
                self._storage_supported(uri, options)
                and self._settings_are_valid()
                and self._exporter_supported(options.get("format"))
            ):
                raise NotConfigured(f"feed {uri!r} cannot be exported")

    # -- signals ------------------------------------------------------------------------
    def open_spider(self, spider: Any) -> None:
        """A slot for every feed, on its first batch's URI."""
        for uri, options in self.feeds.items():
            params = self._get_uri_params(spider, options["uri_params"])
            self.slots.append(
                self._start_new_batch(1, apply_uri_params(uri, params), options, spider, uri)
            )

    def item_scraped(self, item: Any, spider: Any) -> None:
        """Export ``item`` to every feed that accepts it; a full batch is closed and
        the next one started."""
        slots = []
        for slot in self.slots:
            slots.append(slot)
            if not slot.filter.accepts(item):
                continue
            slot.start_exporting()
            slot.exporter.export_item(item)
            slot.itemcount += 1
            options = self.feeds[slot.uri_template]
            limit = options["batch_item_count"]
            if limit and slot.itemcount >= limit:
                params = self._get_uri_params(spider, options["uri_params"], slot)
                self._schedule_slot_close(slot, spider)
                slots[-1] = self._start_new_batch(
                    slot.batch_id + 1,
                    apply_uri_params(slot.uri_template, params),
                    options,
                    spider,
                    slot.uri_template,
                )
        self.slots = slots

    async def close_spider(self, spider: Any) -> None:
        """Finish and store every slot, then send ``feed_exporter_closed``."""
        for slot in self.slots:
            self._schedule_slot_close(slot, spider)
        await self._closing.wait()
        await self.crawler.signals.send_catch_log_async(feed_exporter_closed)

    # -- slots --------------------------------------------------------------------------
    def _schedule_slot_close(self, slot: FeedSlot, spider: Any) -> None:
        """Close ``slot`` in the background (its store may take a while);
        ``close_spider`` waits for every such close."""
        self._closing.spawn(self._close_logged(slot, spider), name=f"close feed {slot.uri}")

    async def _close_logged(self, slot: FeedSlot, spider: Any) -> None:
        """``_close_slot``, whose failure before the store (the exporter could not finish
        the document) is logged: nobody awaits the task for its result."""
        try:
            await self._close_slot(slot, spider)
        except Exception:
            log.exception("Error closing the %s feed in: %s", slot.format, slot.uri)

    @staticmethod
    def _get_file(slot: FeedSlot) -> IO[bytes]:
        """The file the storage gave: a post-processing chain is closed first, so that
        the compressed stream is complete, and the file under it is stored."""
        assert slot.file is not None
        if isinstance(slot.file, PostProcessingManager):
            slot.file.close()
            return slot.file.file
        return slot.file

    async def _close_slot(self, slot: FeedSlot, spider: Any) -> None:
        if slot.itemcount:
            slot.finish_exporting()
        elif slot.store_empty and slot.batch_id == 1:
            slot.start_exporting()
            slot.finish_exporting()
        else:
            return  # nothing to store: an empty later batch, or store_empty off
        what = f"{slot.format} feed ({slot.itemcount} items) in: {slot.uri}"
        kind = type(slot.storage).__name__
        try:
            result = slot.storage.store(self._get_file(slot))
            if inspect.isawaitable(result):
                await result
        except Exception:
            log.error("Error storing %s", what, exc_info=True, extra={"spider": spider})
            self.crawler.stats.inc_value(f"feedexport/failed_count/{kind}")
        else:
            log.info("Stored %s", what, extra={"spider": spider})
            self.crawler.stats.inc_value(f"feedexport/success_count/{kind}")
        await self.crawler.signals.send_catch_log_async(feed_slot_closed, slot=slot)

    def _start_new_batch(
        self,
        batch_id: int,
        uri: str,
        feed_options: dict[str, Any],
        spider: Any,
        uri_template: str,
    ) -> FeedSlot:
        """The slot of a feed's batch ``batch_id``, written to ``uri``."""
        return FeedSlot(
            storage=self._get_storage(uri, feed_options),
            uri=uri,
            format=feed_options["format"],
            store_empty=feed_options["store_empty"],
            batch_id=batch_id,
            uri_template=uri_template,
            filter=self.filters[uri_template],
            feed_options=feed_options,
            spider=spider,
            exporters=self.exporters,
            settings=self.settings,
            crawler=self.crawler,
        )

    # -- configuration ------------------------------------------------------------------
    def _exporter_supported(self, format_: Any) -> bool:
        if format_ in self.exporters:
            return True
        log.error("Unknown feed format: %(format)s", {"format": format_})
        return False

    def _settings_are_valid(self) -> bool:
        """A batched feed's URI must tell its batches apart."""
        for uri, options in self.feeds.items():
            if options["batch_item_count"] and not _BATCH_MARK.search(uri):
                log.error(
                    "The feed URI %s needs %%(batch_id)d or %%(batch_time)s when "
                    "batch_item_count (FEED_EXPORT_BATCH_ITEM_COUNT) is set, so that each "
                    "batch has a name of its own",
                    uri,
                )
                return False
        return True

    def _storage_supported(self, uri: str, feed_options: dict[str, Any]) -> bool:
        scheme = _scheme(uri)
        if scheme not in self.storages and not PureWindowsPath(uri).drive:
            log.error("Unknown feed storage scheme: %(scheme)s", {"scheme": scheme})
            return False
        try:
            self._get_storage(uri, feed_options)
        except NotConfigured as exc:
            log.error(
                "Disabled feed storage scheme: %(scheme)s. Reason: %(reason)s",
                {"scheme": scheme, "reason": str(exc)},
            )
            return False
        return True

    def _get_storage(self, uri: str, feed_options: dict[str, Any]) -> Any:
        cls = self.storages.get(_scheme(uri), self.storages["file"])
        return build_from_crawler(cls, self.crawler, uri, feed_options=feed_options)

    def _get_uri_params(
        self, spider: Any, uri_params: str | UriParams | None, slot: FeedSlot | None = None
    ) -> dict[str, Any]:
        """The placeholders of a URI: the spider's attributes, ``time``,
        ``batch_time``, ``batch_id``, through the feed's ``uri_params`` function (whose
        None means "the dict as changed in place")."""
        params = _attributes(spider)
        now = datetime.now(tz=UTC)
        params["time"] = now.replace(microsecond=0).isoformat().replace(":", "-")
        params["batch_time"] = now.isoformat().replace(":", "-")
        params["batch_id"] = slot.batch_id + 1 if slot is not None else 1
        if not uri_params:
            return params
        given = load_object(uri_params)(params, spider)
        return params if given is None else dict(given)

    def _load_filter(self, feed_options: Mapping[str, Any]) -> ItemFilter:
        cls: type[ItemFilter] = load_object(feed_options.get("item_filter", ItemFilter))
        return cls(feed_options)


def _plugin(name: Any) -> Any:
    """A post-processing plugin as FEEDS names it: skitter's short names (``gzip``)
    too, so that one FEEDS entry means the same here and in a skitter crawl."""
    short = SHORT_NAMES.get(name) if isinstance(name, str) else None
    return getattr(_postprocessing, short) if short else name


def _attributes(spider: Any) -> dict[str, Any]:
    """The spider's attributes by name, those that cannot be read now left out."""
    out = {}
    for name in dir(spider):
        try:
            out[name] = getattr(spider, name)
        except Exception:  # a property that needs a running crawl
            continue
    return out


def _scheme(uri: str) -> str:
    return "stdout" if uri in ("-", "stdout:") else urlparse(uri).scheme


def _loaded(custom: Mapping[str, Any] | None, base: Mapping[str, str]) -> dict[str, Any]:
    """The built-in table with ``custom`` merged over it, loaded; None switches an entry
    off, and a class that raises NotConfigured when loaded is left out."""
    table: dict[str, Any] = {**base, **(custom or {})}
    out = {}
    for key, value in table.items():
        if value is None:
            continue
        try:
            out[key] = load_object(value)
        except NotConfigured:
            continue
    return out
