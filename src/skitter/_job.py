"""A job directory: everything a crawl needs to stop and go on later, in one SQLite file.

The tasks (queue, leases, states, the dupe filter) live in a ``JobStore``, the
persistence seam (``skitter.frontier._jobstore`` states its contract); the job
directory makes an ``SqliteFrontier`` and talks to it through that protocol only. At
every write of the store, in the same transaction, the job also records (``checkpoint``):

- the size of every feed file, after flushing it: items are written before their task
  is acknowledged, so every item of a completed task is inside that size; on resume each
  feed is cut back to it (what lies beyond belongs to tasks that will run again);
- for a batched or remote feed, the batch it was writing (its placeholders and item
  count): remote feeds are staged in ``feeds/`` beside the database, and a resume
  uploads what the last run had finished but not stored (``pipelines._feed_uploads``);
- the statistics, so that counts continue where they were;
- the spider's ``state`` dict (as JSON), Scrapy's JOBDIR feature;
- how many start requests were queued, so that a resumed job does not queue them again;
- the cookie jars that changed, in ``cookies/`` beside the database (``CookieJarFiles``:
  0600 files, written first, so a task whose response logged in is never recorded done
  without its cookie); COOKIES_PERSIST=False keeps them off the disk;
- the live sessions of SessionMiddleware (ids, uses, proxy index, fingerprint; their
  cookies are jars like any other), so a resumed job goes on as the same visitors.

So a job survives Ctrl-C and SIGKILL alike: nothing queued is lost, a task completed
before the last flush (every 50 ms) is not fetched again, and no item is lost. An item
appears twice only if its task was mid-callback at a flush and the process was killed
before the task completed (it runs again and yields the item again).

A store that refuses a write stops the crawl (``StorageError``; the exit status says it
failed) and records nothing more: a feed that cannot be written makes the checkpoint
refuse, so neither its size nor the tasks completed since the last checkpoint are
recorded, and a resume (once there is room again) cuts the feed back and fetches those
tasks again; the job database failing is the same, seen from the other side. A job
that cannot be read back (damaged file or rows, a checkpoint that is not what skitter
writes, an empty file) is refused with a ConfigError before anything is fetched.

Modes when the directory already holds a job: ``resume`` (the default), ``fresh`` (forget
the queue, the dupe filter and the rest) and ``recrawl`` (keep what is known, queue every
finished task again).
"""

from __future__ import annotations

import contextlib
import dataclasses
import logging
from pathlib import Path
from typing import TYPE_CHECKING, Any

import orjson

from skitter.downloader import CookiesMiddleware, SessionMiddleware
from skitter.downloader.wiring import CookieJarFiles
from skitter.engine import Project
from skitter.exceptions import ConfigError
from skitter.frontier import JobStore

if TYPE_CHECKING:
    from skitter.frontier import SqliteFrontier

__all__ = ["JOB_MODES", "JobDir"]

log = logging.getLogger("skitter.job")

JOB_MODES = ("resume", "fresh", "recrawl")
DATABASE = "job.sqlite3"
COOKIES = "cookies"
FEEDS = "feeds"


class JobDir:
    """One crawl's job directory."""

    def __init__(self, path: str | Path, mode: str = "resume") -> None:
        if mode not in JOB_MODES:
            raise ConfigError(f"job mode must be one of {', '.join(JOB_MODES)}, got {mode!r}")
        self.path = Path(path)
        self.mode = mode
        self._warned_state = False
        self._cookies: tuple[CookiesMiddleware, CookieJarFiles] | None = None

    @property
    def database(self) -> Path:
        return self.path / DATABASE

    def frontier(self, spider: object) -> SqliteFrontier:
        """The job's frontier, its ``JobStore`` too; ConfigError if its database cannot
        be used (see ``skitter.frontier._sqlite._db``). An empty file is refused too,
        unless the job is started afresh: a crawl never leaves one, so it was cut short
        by something else, and taking it for a new job would crawl everything again."""
        database = self.database
        with contextlib.suppress(OSError):
            if database.stat().st_size == 0:
                if self.mode != "fresh":
                    raise ConfigError(
                        f"job DB is empty (0 bytes), which a crawl never writes; it may have "
                        f"been truncated. Move it away to start a new job, or use --job-mode "
                        f"fresh ({database})"
                    )
                database.unlink()
        from skitter.frontier import SqliteFrontier  # here: only a job directory loads sqlite3

        return SqliteFrontier(database, spider=spider)

    async def open(self, project: Project, store: JobStore) -> None:
        """Apply the mode, load the job, restore what the last checkpoint saved, and
        checkpoint from now on. Logs what was found."""
        jars = CookieJarFiles(self.path / COOKIES)
        for feed in project.pipelines.feeds:
            feed.staging_dir = self.path / FEEDS
        if self.mode == "fresh":
            await store.flush_all()
            await store.clear_meta()
            jars.clear()
            for staged in (self.path / FEEDS).glob("*"):
                staged.unlink(missing_ok=True)
        elif self.mode == "recrawl":
            again = await store.mark_all_due()
            log.info("Job %s: %d finished tasks queued again (recrawl)", self.path, again)
        report = await store.load()
        meta = await self.saved(store)
        found = report.found
        if not meta and not (found.queued or found.succeeded or found.failed or found.bad):
            log.info("Job %s: new job", self.path)
        else:
            log.info(
                "Job %s: resuming %d queued and %d leased by the previous run (reclaimed); "
                "%d done, %d failed, %d bad before",
                self.path,
                found.queued,
                report.reclaimed,
                found.succeeded,
                found.failed,
                found.bad,
            )
            if report.undecodable:
                log.warning(
                    "Job %s: %d stored requests could not be read back and were marked BAD "
                    "(see `skitter job %s`)",
                    self.path,
                    report.undecodable,
                    self.path,
                )
            self._restore(project, meta)
        cookies = project.downloader.middleware(CookiesMiddleware)
        if cookies is not None and cookies.persist:
            kept = jars.load(cookies)
            if kept:
                log.info("Job %s: %d cookie jars restored", self.path, kept)
            self._cookies = cookies, jars
        sessions = project.downloader.middleware(SessionMiddleware)
        if sessions is not None and "sessions" in meta:
            live = sessions.pool.restore(meta["sessions"])
            log.info("Job %s: %d live sessions restored", self.path, live)
        store.checkpoint = lambda: self.checkpoint(project)
        store.on_error = project.fail  # a write behind failed: dispatch nothing more

    async def saved(self, store: JobStore) -> dict[str, Any]:
        """What the last checkpoint saved (empty for a new job); ConfigError if it is not
        what ``checkpoint`` writes: resuming from a guess would crawl too much or too
        little, or cut a feed in the wrong place."""
        meta = await store.meta()
        for key, (shape, valid) in _META_SHAPES.items():
            if key in meta and not valid(meta[key]):
                raise ConfigError(
                    f"job database {self.database}: the checkpoint's {key!r} is "
                    f"{meta[key]!r:.80}, not {shape}; move the file away to start a new job, "
                    "or start afresh with --job-mode fresh"
                )
        return meta

    def _restore(self, project: Project, meta: dict[str, Any]) -> None:
        for key, value in meta.get("stats", {}).items():
            project.stats.set(key, value)
        project.spider.state.update(meta.get("spider_state", {}))
        project.start_offset = meta.get("start_offset", 0)
        project.start_exhausted = meta.get("start_done", False)
        sizes = meta.get("feeds", {})
        batches = meta.get("feed_batches", {})
        for feed in project.pipelines.feeds:
            feed.resume_batch = batches.get(feed.key)
            if feed.options.overwrite and not feed.options.staged:
                # (a staged feed continues its staging file; its target is replaced)
                log.warning(
                    "Resuming job %s: appending to %s instead of overwriting it, so that the "
                    "items of the earlier runs are kept",
                    self.path,
                    feed.key,
                )
                feed.options = dataclasses.replace(feed.options, overwrite=False)
            size = sizes.get(feed.key)
            if size is not None:
                feed.resume_at = size

    def checkpoint(self, project: Project) -> dict[str, Any]:
        """What the store records with each write (called by it; must be quick).
        Raises StorageError if a feed is broken, so that the flush records nothing: not
        the feed's size, and not the tasks completed since the last checkpoint, whose
        items the feed may have lost (they run again on a resume)."""
        if self._cookies is not None:
            cookies, jars = self._cookies
            jars.save(cookies)
        out: dict[str, Any] = {
            "feeds": project.pipelines.feed_positions(),
            "feed_batches": project.pipelines.feed_batches(),
            "stats": project.stats.to_dict(),
            "start_offset": project.start_offset,
            "start_done": project.start_exhausted,
        }
        sessions = project.downloader.middleware(SessionMiddleware)
        if sessions is not None:
            out["sessions"] = sessions.pool.snapshot()
        state = project.spider.state
        if state:
            try:
                orjson.dumps(state)
            except TypeError as exc:
                if not self._warned_state:
                    self._warned_state = True
                    log.warning("spider.state cannot be saved in the job (not JSON): %s", exc)
            else:
                out["spider_state"] = state
        return out


def _is_count(value: Any) -> bool:
    return isinstance(value, int) and not isinstance(value, bool) and value >= 0


#: What each key of a checkpoint holds, as ``checkpoint`` writes it.
_META_SHAPES: dict[str, tuple[str, Any]] = {
    "feeds": (
        "a map of feed names to sizes",
        lambda v: isinstance(v, dict) and all(_is_count(size) for size in v.values()),
    ),
    "feed_batches": (
        "a map of feed names to batches",
        lambda v: (
            isinstance(v, dict)
            and all(
                isinstance(b, dict) and _is_count(b.get("batch_id")) and _is_count(b.get("items"))
                for b in v.values()
            )
        ),
    ),
    "stats": ("a map of statistics", lambda v: isinstance(v, dict)),
    "spider_state": ("a map (spider.state)", lambda v: isinstance(v, dict)),
    "start_offset": ("a count of start requests", _is_count),
    "start_done": ("true or false", lambda v: isinstance(v, bool)),
    "sessions": ("a session pool", lambda v: isinstance(v, dict)),
}
