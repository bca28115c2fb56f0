"""ConditionalRecrawlMiddleware (RECRAWL_CONDITIONAL): a recrawl asks "changed since?".

pyspider's etag / last_modified: a task that can be crawled again (``age`` set, or
``auto_recrawl``) keeps the validators of its last successful response (``ETag``,
``Last-Modified``); when the same task is downloaded again they go out as
``If-None-Match`` / ``If-Modified-Since`` (unless the request set its own). A 304 to
them means the page did not change: it is counted (``recrawl/unchanged``), flagged
``"unchanged"``, and its task is acknowledged like any response, so ``auto_recrawl``
puts it back ``age`` later. The callback does not run on it, because a 304 is not a
2xx: HttpErrorMiddleware lets it through only to a spider that handles 304
(``handle_httpstatus_list = [304]`` or the same meta key), Scrapy's one rule for every
status, so the spider asks the way it already asks for any other status.

Where validators live: a side store keyed by taskid, not the frontier's task records.
Every frontier (memory, SQLite, Redis) would otherwise need a new field in its record,
its codec and its contract suite for what only the downloader reads; a task's taskid is
already the key all three settle by. The store is a dict for the crawl, and with a job
directory also ``validators.sqlite3`` in it, loaded at start and written through on
the middleware's own thread, so a resumed or ``--job-mode recrawl`` job revalidates what
the last run saw; ``--job-mode fresh`` forgets them with the rest of the job (a fresh
crawl must see every page whole). A worker of a distributed crawl is handed the job's
store in Redis by the crawler (``recrawl_validators``: ``cluster.RedisValidators``),
since any worker may recrawl any task. Only tasks that can be recrawled are
remembered, so a crawl of pages without ``age`` keeps nothing and asks nothing.
"""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import TYPE_CHECKING, Any, Protocol

from skitter._types import CrawlContext, StatsSink
from skitter.exceptions import ConfigError, NotConfigured
from skitter.http import Request, Response
from skitter.settings import DownloaderSettings

if TYPE_CHECKING:
    import sqlite3

__all__ = ["ConditionalRecrawlMiddleware", "ValidatorStore"]

DATABASE = "validators.sqlite3"
#: meta key: the validators this middleware put on the request (to recognise them later).
_SENT = "_recrawl_validators"
_HEADERS = ("If-None-Match", "If-Modified-Since")
_SCHEMA = (
    "CREATE TABLE IF NOT EXISTS validators "
    "(taskid TEXT PRIMARY KEY, etag TEXT, last_modified TEXT) WITHOUT ROWID"
)

Validators = tuple[str | None, str | None]


class ValidatorStore(Protocol):
    """Validators shared with other processes (``cluster.RedisValidators``). Neither
    call raises: a store out of reach knows nothing, and the page is crawled whole."""

    async def get(self, taskid: str) -> Validators | None: ...

    async def put(self, taskid: str, etag: str | None, modified: str | None) -> None: ...


class _ValidatorFile:
    """The job directory's copy of the validators (blocking; run on one thread)."""

    def __init__(self, path: Path, forget: bool) -> None:
        self.path = path
        self.forget = forget
        self._db: sqlite3.Connection | None = None

    def load(self) -> dict[str, Validators]:
        import sqlite3  # here: only a recrawl with a job directory keeps validators

        self.path.parent.mkdir(parents=True, exist_ok=True)
        db = self._db = sqlite3.connect(self.path, check_same_thread=False)
        try:
            db.execute("PRAGMA journal_mode=WAL")
            with db:
                db.execute(_SCHEMA)
                if self.forget:
                    db.execute("DELETE FROM validators")
            rows = db.execute("SELECT taskid, etag, last_modified FROM validators").fetchall()
        except sqlite3.DatabaseError as exc:
            self.close()
            raise ConfigError(
                f"recrawl validators {self.path} cannot be read ({exc}); move the file away "
                "(the next recrawl then downloads every page whole)"
            ) from None
        return {taskid: (etag, modified) for taskid, etag, modified in rows}

    def save(self, taskid: str, etag: str | None, modified: str | None) -> None:
        if self._db is not None:
            with self._db:
                self._db.execute(
                    "INSERT OR REPLACE INTO validators VALUES (?, ?, ?)", (taskid, etag, modified)
                )

    def close(self) -> None:
        if self._db is not None:
            self._db.close()
            self._db = None


def _recrawlable(request: Request) -> bool:
    return request.age >= 0 or request.auto_recrawl


class ConditionalRecrawlMiddleware:
    """Sends a recrawled task's last validators; counts a 304 to them as unchanged."""

    def __init__(
        self,
        stats: StatsSink,
        file: _ValidatorFile | None = None,
        shared: ValidatorStore | None = None,
    ) -> None:
        self.stats = stats
        #: The crawl's validators by taskid (a worker's shared store holds them instead).
        self.validators: dict[str, Validators] = {}
        self._file = file
        self._shared = shared
        self._executor: ThreadPoolExecutor | None = None

    @classmethod
    def from_crawler(cls, crawler: CrawlContext) -> ConditionalRecrawlMiddleware:
        if not crawler.settings.view(DownloaderSettings).recrawl_conditional:
            raise NotConfigured
        shared: ValidatorStore | None = getattr(crawler, "recrawl_validators", None)
        if shared is not None:  # a worker's: the job's, in Redis
            return cls(crawler.stats, shared=shared)
        job = getattr(crawler, "job", None)  # the Crawler's job directory, if any
        path = getattr(job, "path", None)
        if path is None:
            return cls(crawler.stats)
        forget = getattr(job, "mode", "resume") == "fresh"
        return cls(crawler.stats, _ValidatorFile(Path(path) / DATABASE, forget))

    async def open(self, spider: Any) -> None:
        """Load the job directory's validators (with the Downloader)."""
        if self._file is not None:
            self._executor = ThreadPoolExecutor(1, thread_name_prefix="skitter-validators")
            loop = asyncio.get_running_loop()
            self.validators = await loop.run_in_executor(self._executor, self._file.load)

    async def close(self) -> None:
        executor, self._executor = self._executor, None
        if executor is not None and self._file is not None:
            await asyncio.get_running_loop().run_in_executor(executor, self._file.close)
            executor.shutdown(wait=False)

    def process_request(self, request: Request, spider: Any = None) -> Awaitable[None] | None:
        if not _recrawlable(request):
            return None
        if self._shared is not None:
            return self._ask_shared(request, self._shared)
        self._condition(request, self.validators.get(request.taskid))
        return None

    async def _ask_shared(self, request: Request, shared: ValidatorStore) -> None:
        self._condition(request, await shared.get(request.taskid))

    def _condition(self, request: Request, known: Validators | None) -> None:
        meta = request.meta
        headers = request.headers
        sent = meta.pop(_SENT, None)
        if sent is not None:  # the same Request object again (memory frontier, auto_recrawl)
            for name, value in zip(_HEADERS, sent, strict=True):
                if value is not None and headers.text(name) == value:
                    del headers[name]
        if known is None or "If-None-Match" in headers or "If-Modified-Since" in headers:
            return  # nothing known, or the spider's own condition wins
        for name, value in zip(_HEADERS, known, strict=True):
            if value is not None:
                headers[name] = value
        meta[_SENT] = known

    def process_response(
        self, request: Request, response: Response, spider: Any = None
    ) -> Response | Awaitable[Response]:
        if not _recrawlable(request):
            return response
        if response.status == 304 and _SENT in request.meta:
            self.stats.inc("recrawl/unchanged")
            response.flags.append("unchanged")
            return response
        if not 200 <= response.status < 300:
            return response
        etag, modified = response.header("ETag"), response.header("Last-Modified")
        if etag is None and modified is None:
            return response
        taskid = request.taskid
        if self._shared is not None:
            return self._save(self._shared.put(taskid, etag, modified), response)
        if self.validators.get(taskid) == (etag, modified):
            return response
        self.validators[taskid] = (etag, modified)
        if self._file is None or self._executor is None:
            return response
        loop = asyncio.get_running_loop()
        saved = loop.run_in_executor(self._executor, self._file.save, taskid, etag, modified)
        return self._save(saved, response)

    @staticmethod
    async def _save(saving: Awaitable[None], response: Response) -> Response:
        await saving
        return response
