"""Feed exports: the FEEDS setting turned into files of scraped items.

Each entry becomes a ``FeedExporter``, which behaves like the last item pipeline, so it
writes exactly the items that survived every user pipeline. ``overwrite=False`` (Scrapy's
``-o``) continues an existing file and ``overwrite=True`` (``-O``) replaces it; a JSON
array is continued by reopening it before its closing bracket (see ``_exporters``).

Writes go through a buffered file, flushed every ``FLUSH_ITEMS`` items or
``FLUSH_SECONDS`` seconds and on close: a crash loses at most that much, and tailing the
file shows progress. Writing is synchronous on the event loop, like Scrapy's: a buffered
write is a memory copy, and a flush lands in the page cache. ``close()`` is synchronous
too, so it completes even inside a cancelled task and the file is always a valid document.

A file that refuses a write (disk full, I/O error) is not a bad item: any ``OSError``
while opening, writing, flushing or closing becomes a ``StorageError`` ("feed
'out.jsonl': cannot write: [Errno 28] No space left on device"), which stops the crawl
without acknowledging the task at hand. The feed is then broken for good: what the
buffer held is lost (those items are taken back out of the counts, and counted as
``feedexport/lost_items``), everything later is refused at once, and ``position()``,
what a job checkpoint records, raises instead of reporting a size past the last flush
that succeeded. ``close()`` cuts the file back to that flush and finishes the document
there if the disk takes the few bytes it needs, then raises. A path that cannot be
opened at all is a ``ConfigError``, before the crawl starts. An item the format cannot
hold fails the crawl too, but leaves the file whole (``ItemExporter.unwritable``).

Batches (``batch_item_count``) finish the document after that many items and start the
next file. A remote or compressed feed is staged: written locally as above, stored when
a batch or the feed is finished (``_feed_uploads``); an upload that fails fails the crawl.
"""

from __future__ import annotations

import contextlib
import logging
import os
import sys
from collections.abc import Coroutine, Mapping
from pathlib import Path
from typing import IO, Any

from skitter._clock import Clock, SystemClock
from skitter._secrets import mask_url
from skitter._types import CrawlContext, StatsSink
from skitter.exceptions import ConfigError, StorageError
from skitter.pipelines._exporters import ItemExporter
from skitter.pipelines._feed_options import (
    FeedOptions,
    batch_stamp,
    parse_feeds,
    shown,
    time_stamp,
)
from skitter.pipelines._feed_registry import feeds_setting
from skitter.pipelines._feed_storage import make_exporter, make_storage
from skitter.pipelines._feed_uploads import Staging, Uploads, staging_folder

__all__ = ["FeedExporter", "build_feeds"]

log = logging.getLogger("skitter.feeds")

_IN_PLACE = {"file": "FileFeedStorage", "stdout": "StdoutFeedStorage"}  # Scrapy's names
FLUSH_ITEMS = 1000
FLUSH_SECONDS = 1.0


class FeedExporter:
    """One feed: a file, an exporter and its counters. Quacks like an item pipeline."""

    def __init__(
        self,
        options: FeedOptions,
        *,
        stats: StatsSink | None = None,
        clock: Clock | None = None,
        settings: Mapping[str, Any] | None = None,
        spider: Any = None,
    ) -> None:
        self.options = options
        self._settings: Mapping[str, Any] = settings or {}
        self._spider = spider
        #: Items in the file: those whose bytes reached the operating system, plus those
        #: still in the buffer (which a failed flush takes back out, as lost).
        self.item_count = 0
        #: Items that were accepted but whose bytes never reached the file.
        self.lost_items = 0
        self._stats = stats
        self._clock: Clock = clock or SystemClock()
        self._file: IO[bytes] | None = None
        self._exporter: ItemExporter | None = None
        self._closed = False
        #: Items accepted since the last flush that reached the operating system.
        self._pending = 0
        self._flushed_at = 0.0
        #: The file's size at that flush: what a job checkpoint may record. Never read
        #: back with ``tell()`` after a failure, when the buffer's state is unknown.
        self._good = 0
        #: Why the feed cannot be written any more (None while it can).
        self._failure: str | None = None
        self._count_key = f"feedexport/item_count/{options.format}"
        #: When resuming a job: the file's size at the job's last checkpoint. What follows
        #: was written for tasks that were not recorded done, so it is cut off on open.
        self.resume_at: int | None = None
        #: When resuming a job: the batch its last checkpoint was in; and the job's
        #: ``feeds/`` folder, where a staged feed keeps its files (else a temporary one).
        self.resume_batch: Mapping[str, Any] | None = None
        self.staging_dir: Path | None = None
        #: The placeholders of the batch being written, and its item count.
        self.batch: dict[str, Any] = {"batch_id": 1, "batch_time": batch_stamp()}
        self.batch_items = 0
        self._path: Path | None = None  # the file written (None: stdout, or not open)
        self._staging: Staging | None = None
        self._uploads: Uploads | None = None
        self._created = False  # this run made the file (removed if empty, store_empty)

    @property
    def failure(self) -> str | None:
        """Why this feed is broken (a write, flush or close failed, or an upload failed
        for good), or None. A broken feed refuses everything from then on."""
        if self._failure is None and self._uploads is not None:
            return self._uploads.failure
        return self._failure

    # -- pipeline face ----------------------------------------------------------------
    def open_spider(self, spider: Any) -> None:
        self.open()

    def process_item(self, item: Any, spider: Any) -> Any:
        failure = self.failure
        if failure is not None:
            raise StorageError(failure)
        classes = self.options.item_classes
        if classes and not isinstance(item, classes):
            return item
        chosen = self.options.item_filter
        if chosen is not None and not chosen.accepts(item):
            return item
        exporter = self._exporter
        if exporter is None:
            raise RuntimeError(f"{self!r} is not open")
        try:
            exporter.export(item)
        except OSError as exc:
            raise self._broken("write", exc) from exc
        except Exception as exc:  # the item's fault, not the file's: the feed stays whole
            why = exporter.unwritable(item, exc)
            raise StorageError(f"feed {shown(self.options.uri)}: {why}") from exc
        if self._pending + 1 >= FLUSH_ITEMS or self._clock.monotonic() - self._flushed_at >= (
            FLUSH_SECONDS
        ):
            # If this flush fails, the item is refused (its task is not acknowledged)
            # and the ones before it are lost.
            self._flush_file()
        else:
            self._pending += 1
        self.item_count += 1
        self.batch_items += 1
        if self._stats is not None:
            self._stats.inc(self._count_key)
        if self.options.batch_item_count and self.batch_items >= self.options.batch_item_count:
            self._next_batch()
        return item

    def close_spider(self, spider: Any) -> Coroutine[Any, Any, None] | None:
        """Close; a staged feed then awaits its uploads (also if closing failed)."""
        if self._uploads is None:
            self.close()
            return None
        return self._close_staged(self._uploads)

    async def _close_staged(self, uploads: Uploads) -> None:
        try:
            self.close()
        finally:
            await uploads.drain()

    # -- file -------------------------------------------------------------------------
    def _open_file(self, path: Path, mode: str) -> IO[bytes]:
        """The feed's buffered file (tests replace it with one on a disk that fills up)."""
        return open(path, mode, buffering=1 << 16)

    def open(self) -> None:
        """Open (or continue) the file and start the document; the start is flushed at
        once, so that a disk that cannot take it stops the crawl before it begins."""
        opts = self.options
        if self.resume_batch is not None:
            self.batch = {k: v for k, v in self.resume_batch.items() if k != "items"}
            self.batch_items = int(self.resume_batch.get("items", 0))
        else:
            self.batch["time"] = opts.params.get("time")
        if opts.staged:
            self._open_staging()
        self._start(resume=self.resume_at)

    def _open_staging(self) -> None:
        """Set up the staging folder and the storage, and on a resume take up what the
        last run left there (``Staging.resume``)."""
        opts = self.options
        folder = staging_folder(opts, self.staging_dir, self._settings.get("FEED_TEMPDIR"))
        staging = self._staging = Staging(folder, self.key, durable=self.staging_dir is not None)
        resumed = self.resume_batch is not None
        self._uploads = Uploads(
            opts,
            make_storage(opts, self._settings, resumed=resumed, spider=self._spider),
            staging,
            stats=self._stats,
            target=lambda batch: opts.target(batch, self._spider),
        )
        staging.resume(int(self.batch["batch_id"]) if resumed else None, self._uploads)

    def _start(self, *, resume: int | None, fresh: bool = False) -> None:
        """Open the batch's file and start its document. ``resume`` is the size a job
        checkpoint recorded (the file is cut back to it), None when not resuming."""
        opts = self.options
        path = self._path = self._file_path()
        existing = False
        if path is None:
            file: IO[bytes] = sys.stdout.buffer
        else:
            continuing = resume is not None or not (opts.overwrite or opts.staged or fresh)
            try:
                path.parent.mkdir(parents=True, exist_ok=True)
                existing = continuing and path.is_file() and path.stat().st_size > 0
                self._created = not existing
                file = self._open_file(path, "r+b" if existing else "wb")
            except OSError as exc:
                raise ConfigError(f"cannot open feed {shown(opts.uri)}: {exc}") from exc
        exporter = make_exporter(opts, file, getattr(self._spider, "crawler", None))
        try:
            if existing and resume is not None:
                file.truncate(min(resume, path.stat().st_size))  # type: ignore[union-attr]
                existing = resume > 0
            exporter.start(existing)
            file.flush()
            self._good = file.tell() if path is not None else 0
        except BaseException as exc:
            if path is not None:
                with contextlib.suppress(OSError):
                    file.close()
            if isinstance(exc, OSError):
                raise StorageError(f"feed {shown(opts.uri)}: cannot open: {exc}") from exc
            raise
        self._file, self._exporter = file, exporter
        self._flushed_at = self._clock.monotonic()

    def _file_path(self) -> Path | None:
        """The staging file, the batch's local file, or None for standard output."""
        opts = self.options
        if self._staging is not None:
            return self._staging.current
        if opts.scheme == "stdout":
            return None
        if not opts.batch_item_count:
            return opts.path
        return opts.local_path(opts.target(self.batch, self._spider))

    def _next_batch(self) -> None:
        """The batch is full: finish its document and store it, then start the next."""
        self._finish_file()
        self._store_batch()
        self.batch = {
            "batch_id": int(self.batch["batch_id"]) + 1,
            "batch_time": batch_stamp(),
            "time": time_stamp(),  # Scrapy's %(time)s: when the batch started
        }
        self.batch_items = 0
        # after a resume, a later batch's file holds only items of tasks that run again
        self._start(resume=None, fresh=self.resume_batch is not None)

    def _finish_file(self) -> None:
        """Complete the document and close the file (raises StorageError if it fails)."""
        assert self._exporter is not None and self._file is not None
        try:
            self._exporter.finish()
        except OSError as exc:
            raise self._broken("write", exc) from exc
        self._flush_file()
        if self._path is not None:
            try:
                self._file.close()
            except OSError as exc:
                raise self._broken("close", exc) from exc

    def _store_batch(self) -> None:
        """Queue a staged batch for upload; drop an empty file nobody asked for."""
        opts = self.options
        empty = not self.batch_items and (int(self.batch["batch_id"]) > 1 or not opts.store_empty)
        if self._staging is not None and self._uploads is not None:
            if empty:
                self._staging.current.unlink(missing_ok=True)
                return
            self._staging.finish(self.batch)
            self._uploads.put(int(self.batch["batch_id"]), self.batch)
        elif empty and self._created and self._path is not None:
            with contextlib.suppress(OSError):
                self._path.unlink()

    def flush(self) -> None:
        """Hand the buffered items to the operating system; StorageError if it refuses
        them (or refused earlier)."""
        if self._failure is not None:
            raise StorageError(self._failure)
        if self._file is not None and not self._closed:
            self._flush_file()

    def _flush_file(self) -> None:
        file = self._file
        assert file is not None
        try:
            file.flush()
            good = file.tell() if self._path is not None else 0
        except OSError as exc:
            raise self._broken("write", exc) from exc
        self._good = good
        self._pending = 0
        self._flushed_at = self._clock.monotonic()

    def _broken(self, action: str, exc: OSError) -> StorageError:
        """The feed failed for good: the items since the last good flush are lost (no
        longer counted), and everything from now on is refused."""
        self._failure = message = f"feed {shown(self.options.uri)}: cannot {action}: {exc}"
        lost, self._pending = self._pending, 0
        self.lost_items += lost
        self.item_count -= lost
        if self._stats is not None:
            self._stats.inc(self._count_key, -lost)
            self._stats.inc("feedexport/lost_items", lost)
        log.error(
            "%s. %d items given to it since its last flush did not reach the file; it "
            "takes nothing more",
            message,
            lost,
        )
        return StorageError(message)

    @property
    def key(self) -> str:
        """How a job's checkpoint names this feed: its file, or for a batched or remote
        feed its URI template (masked: the job database holds no password)."""
        opts = self.options
        if opts.path is not None and not opts.batch_item_count and not opts.staged:
            return str(opts.path)
        return mask_url(opts.uri)

    def batch_state(self) -> dict[str, Any] | None:
        """The batch being written, for a job checkpoint (None for a feed that is one
        local file): its placeholders and item count. Taken with ``position()``."""
        opts = self.options
        if self._file is None or not (opts.batch_item_count or opts.staged):
            return None
        if self._staging is not None:
            self._staging.checkpoint(int(self.batch["batch_id"]))
        return {**self.batch, "items": self.batch_items}

    def position(self) -> int | None:
        """The file's size once flushed: what a job checkpoint records (None for stdout,
        or before the file is open). Never past the last write that reached the
        operating system; a broken feed raises StorageError, so that no checkpoint
        records the tasks whose items it lost."""
        if self._file is None or self._path is None:
            return None
        if self._failure is not None:
            raise StorageError(self._failure)
        if not self._closed:
            self._flush_file()
        return self._good

    def close(self) -> None:
        """Finish the document and close the file; safe to call twice, never skipped.

        A broken feed is cut back to what reached it before the failure and, if the disk
        takes the few bytes, finished (a JSON array gets its closing bracket), so that the
        file is a valid document of the items counted; then StorageError is raised."""
        if self._closed or self._exporter is None or self._file is None:
            self._closed = True
            return
        self._closed = True
        opts = self.options
        if self._failure is None:
            try:
                self._exporter.finish()
            except OSError as exc:
                self._broken("write", exc)
            else:
                with contextlib.suppress(StorageError):
                    self._flush_file()
        if self._failure is None and self._path is not None:
            try:
                self._file.close()
            except OSError as exc:
                self._broken("close", exc)
        if self._failure is not None:
            self._salvage()
        key = "success_count" if self._failure is None else "failed_count"
        if self._stats is not None:
            self._stats.inc(f"feedexport/{key}/{opts.format}")
            if not opts.staged:  # by Scrapy's storage name too (an upload counts itself)
                self._stats.inc(f"feedexport/{key}/{_IN_PLACE[opts.scheme]}")
        if self._failure is not None:
            raise StorageError(self._failure)
        self._store_batch()
        where = f"staging, for {mask_url(opts.uri)}" if opts.staged else self._path or "stdout"
        log.info("Stored %s feed (%d items) in: %s", opts.format, self.item_count, where)

    def _salvage(self) -> None:
        """After a failure: release the file, cut it back to the last good flush (a
        record half written is dropped) and finish the document there if possible."""
        path, uri = self._path, shown(self.options.uri)
        assert self._file is not None and self._exporter is not None
        if path is None:
            return  # standard output: what went out is out
        with contextlib.suppress(OSError):
            self._file.close()  # its flush fails again, but the descriptor is released
        try:
            with self._open_file(path, "r+b") as file:
                file.truncate(self._good)
                file.seek(self._good)
                self._exporter.file = file  # the closing bytes go to the cut-back file
                self._exporter.finish()
                file.flush()
        except OSError as exc:
            with contextlib.suppress(OSError):
                os.truncate(path, self._good)
            log.warning(
                "Feed %s could not be finished after the failure (%s): it ends after its "
                "last complete item",
                uri,
                exc,
            )
        log.error("Feed %s holds the %d items written before the failure", uri, self.item_count)

    def __repr__(self) -> str:
        return f"<FeedExporter {self.options.format} {mask_url(self.options.uri)}>"


def build_feeds(crawler: CrawlContext) -> list[FeedExporter]:
    """A FeedExporter for every entry of the FEEDS setting."""
    spider = getattr(crawler, "spider", None)
    settings = crawler.settings
    options = parse_feeds(
        feeds_setting(settings),
        spider_name=str(getattr(spider, "name", "") or ""),
        settings=settings,
        spider=spider,
    )
    clock = getattr(crawler, "clock", None)
    return [
        FeedExporter(opt, stats=crawler.stats, clock=clock, settings=settings, spider=spider)
        for opt in options
    ]
