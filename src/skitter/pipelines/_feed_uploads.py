"""A staged feed's local files and their uploads.

A remote (or compressed) feed is written to a local staging file, ``<slug>.current``.
When a batch (or the feed) is finished, that file becomes ``<slug>.<batch_id>.done``,
with ``<slug>.<batch_id>.json`` beside it holding the batch's placeholders, and is
queued for upload. Uploads run one at a time in a task of the feed's own, so the crawl
goes on while a batch is sent; each is tried ``1 + len(RETRY_DELAYS)`` times with a
growing pause between tries. When they all fail the feed is broken: it refuses items
from then on (the crawl fails, exit status 1) and the file stays where it is.

Without a job directory the staging folder is a temporary one, and a file leaves it as
soon as its upload succeeds. With one (``<job>/feeds/``), the files are what make the
uploads resumable, so they are kept until a job checkpoint no longer needs them: a
resumed job uploads the finished batches the checkpoint had passed, continues the batch
the checkpoint was in (which may have been finished, and even uploaded, after it: it is
stored again, under the same name), and drops what came after the checkpoint (those
items belong to tasks that run again). A file whose upload succeeded is deleted once a
checkpoint has recorded a later batch and the next checkpoint has been taken.
"""

from __future__ import annotations

import asyncio
import contextlib
import hashlib
import logging
import re
import tempfile
from collections import deque
from collections.abc import Callable, Mapping
from pathlib import Path
from typing import Any

import orjson

from skitter._secrets import mask_text
from skitter._tasks import Background
from skitter._types import StatsSink
from skitter.exceptions import ConfigError, StorageError
from skitter.pipelines._feed_options import FeedOptions, shown
from skitter.pipelines._feed_storage import FeedStorage, postprocess

__all__ = ["RETRY_DELAYS", "Staging", "Uploads", "staging_folder"]

log = logging.getLogger("skitter.feeds")

#: Seconds between the tries of one upload (bounded: the last try ends the feed).
RETRY_DELAYS: tuple[float, ...] = (1.0, 3.0, 9.0)
_DONE = re.compile(r"^(?P<slug>[0-9a-f]{16})\.(?P<batch>[0-9]+)\.done$")


def staging_folder(options: FeedOptions, folder: Path | None, tempdir: str | None) -> Path:
    """``folder`` (the job's), or a new temporary one; ConfigError if it cannot be made."""
    try:
        folder = folder or Path(tempfile.mkdtemp(prefix="skitter-feed-", dir=tempdir))
        folder.mkdir(parents=True, exist_ok=True)
    except OSError as exc:
        raise ConfigError(f"feed {shown(options.uri)}: no staging folder: {exc}") from exc
    return folder


class Staging:
    """The staging files of one feed, named by a hash of its key (no secret on disk)."""

    def __init__(self, folder: Path, key: str, *, durable: bool) -> None:
        self.folder = folder
        self.slug = hashlib.sha256(key.encode()).hexdigest()[:16]
        #: In a job directory: files outlive the process and a checkpoint decides.
        self.durable = durable
        #: Batches uploaded but maybe still needed by a resume: deleted by ``checkpoint``.
        self._uploaded: set[int] = set()
        self._reported: deque[int] = deque(maxlen=2)

    @property
    def current(self) -> Path:
        return self.folder / f"{self.slug}.current"

    def done(self, batch_id: int) -> Path:
        return self.folder / f"{self.slug}.{batch_id}.done"

    def _meta(self, batch_id: int) -> Path:
        return self.folder / f"{self.slug}.{batch_id}.json"

    def finish(self, batch: Mapping[str, Any]) -> Path:
        """The current file becomes the finished batch ``batch`` (its placeholders kept)."""
        batch_id = int(batch["batch_id"])
        self._meta(batch_id).write_bytes(orjson.dumps(dict(batch)))
        done = self.done(batch_id)
        self.current.replace(done)
        return done

    def finished(self) -> list[tuple[int, dict[str, Any]]]:
        """The finished batches on disk, in order, with their placeholders."""
        out = []
        for path in self.folder.glob(f"{self.slug}.*.done"):
            match = _DONE.match(path.name)
            if match is None:
                continue
            batch_id = int(match["batch"])
            try:
                meta = orjson.loads(self._meta(batch_id).read_bytes())
            except (OSError, orjson.JSONDecodeError):
                meta = {"batch_id": batch_id}
            out.append((batch_id, meta))
        return sorted(out, key=lambda pair: pair[0])

    def resume(self, current: int | None, uploads: Uploads) -> None:
        """Take up the files a killed run left: queue the finished batches before the
        checkpoint's ``current`` one, make that one current again, drop the ones after
        it (their tasks run again). ``current`` None (no checkpoint): drop them all."""
        for batch_id, batch in self.finished():
            if current is not None and batch_id < current:
                uploads.put(batch_id, batch)
            elif batch_id == current:
                self.reopen(batch_id)
            else:
                self.discard(batch_id)
        if current is None:
            self.current.unlink(missing_ok=True)

    def reopen(self, batch_id: int) -> None:
        """A finished batch becomes the current file again (a resume continues it)."""
        self.done(batch_id).replace(self.current)
        self._meta(batch_id).unlink(missing_ok=True)

    def cleanup(self) -> None:
        """Remove a temporary staging folder once everything in it is stored."""
        if not self.durable:
            with contextlib.suppress(OSError):
                self.folder.rmdir()

    def discard(self, batch_id: int) -> None:
        for path in (self.done(batch_id), self._meta(batch_id)):
            path.unlink(missing_ok=True)

    def uploaded(self, batch_id: int) -> None:
        if self.durable and not self._passed(batch_id):
            self._uploaded.add(batch_id)
        else:
            self.discard(batch_id)

    def checkpoint(self, batch_id: int) -> None:
        """A job checkpoint is recording ``batch_id`` as the current batch."""
        self._reported.append(batch_id)
        for done in [b for b in self._uploaded if self._passed(b)]:
            self._uploaded.discard(done)
            self.discard(done)

    def _passed(self, batch_id: int) -> bool:
        """Whether a committed checkpoint is past ``batch_id``: the one before the last
        reported a later batch (the last may not be committed yet)."""
        return len(self._reported) == 2 and self._reported[0] > batch_id


class Uploads:
    """Stores a staged feed's finished batches, in order, one at a time."""

    def __init__(
        self,
        options: FeedOptions,
        storage: FeedStorage,
        staging: Staging,
        *,
        stats: StatsSink | None,
        target: Callable[[Mapping[str, Any]], str],
    ) -> None:
        self._options = options
        self._storage = storage
        self._staging = staging
        self._stats = stats
        self._target = target
        self._queue: deque[tuple[int, Mapping[str, Any]]] = deque()
        self._task = Background(f"feed upload {mask_text(options.uri)}")
        #: Why an upload failed for good (None while none has).
        self.failure: str | None = None

    def put(self, batch_id: int, batch: Mapping[str, Any]) -> None:
        """Queue the finished batch ``batch_id``; the upload starts at once if it can."""
        self._queue.append((batch_id, batch))
        if self.failure is None and not self._task.running:
            self._task.start(self._run())

    async def drain(self) -> None:
        """Wait for every queued upload; StorageError if one failed. Cancelled, it stops
        the upload at hand (its file stays, for a resume or by hand)."""
        try:
            while self._task.running:
                await self._task.join(shield=True)
        finally:
            if self._task.running:
                await self._task.stop()
            with contextlib.suppress(Exception):
                await self._storage.aclose()
        if self.failure is not None:
            raise StorageError(self.failure)
        self._staging.cleanup()

    async def _run(self) -> None:
        while self._queue and self.failure is None:
            batch_id, batch = self._queue[0]
            await self._upload(batch_id, batch)
            self._queue.popleft()

    async def _upload(self, batch_id: int, batch: Mapping[str, Any]) -> None:
        source = self._staging.done(batch_id)
        target = self._target(batch)
        name = shown(target)
        for attempt, delay in enumerate((*RETRY_DELAYS, None), start=1):
            try:
                stored = await asyncio.to_thread(postprocess, self._options, source)
                try:
                    await self._storage.store(stored, target)
                finally:
                    if stored != source:
                        stored.unlink(missing_ok=True)
            except Exception as exc:
                reason = mask_text(f"{type(exc).__name__}: {exc}")
                if delay is None:
                    self._failed(name, source, reason, attempt)
                    return
                log.warning(
                    "Feed %s: upload failed (%s); try %d of %d in %.0f s",
                    name, reason, attempt + 1, len(RETRY_DELAYS) + 1, delay,
                )  # fmt: skip
                if self._stats is not None:
                    self._stats.inc("feedexport/upload_retries")
                await asyncio.sleep(delay)
            else:
                break
        self._staging.uploaded(batch_id)
        if self._stats is not None:
            self._stats.inc(f"feedexport/success_count/{self._storage.name}")
        log.info("Stored %s feed batch %d in: %s", self._options.format, batch_id, name[1:-1])

    def _failed(self, name: str, source: Path, reason: str, attempts: int) -> None:
        where = (
            "it stays in the job directory and is uploaded when the job resumes"
            if self._staging.durable
            else f"its items are kept in {source}"
        )
        self.failure = f"feed {name}: cannot upload ({reason}) after {attempts} tries"
        if self._stats is not None:
            self._stats.inc(f"feedexport/failed_count/{self._storage.name}")
        log.error("%s; %s", self.failure, where)
