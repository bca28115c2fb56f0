"""Where cache entries live: ``FilesystemCacheStorage`` (a file per response) and
``SqliteCacheStorage`` (one database per spider), both in the cache directory.

The directory (``cache_dir``): HTTPCACHE_DIR as given when absolute; a relative one is
inside the job directory when the crawl has one (``--job-dir`` / JOBDIR: the cache
belongs to the job and moves with it), else inside ``.skitter/`` of the directory the
crawl started in, as Scrapy keeps it in ``.scrapy/``. Entries are per spider name.

Both write an entry in one step, so another task, another worker sharing the directory
or a kill -9 mid-write never leaves a half entry under a key: the filesystem storage
writes a temporary file in the entry's directory and renames it over the entry
(``os.replace``, atomic on POSIX and Windows); the SQLite storage writes in a
transaction (WAL journal, busy timeout for other processes). A left-over temporary
file (``*.tmp``) is never read. No fsync: a crash of the process keeps what the kernel
has; a power cut may lose recent entries, which a cache can afford, and ``decode_entry``
turns what it might damage into a miss.

Methods are blocking (Scrapy's storage contract); the middleware calls them on its own
worker threads, never on the event loop. ``retrieve_response`` raises ``CorruptEntry``
for an entry that is there but not whole (the middleware counts it and stores anew).
"""

from __future__ import annotations

import importlib
import sqlite3
import threading
from pathlib import Path
from types import ModuleType
from typing import Any

from skitter._clock import Clock, SystemClock
from skitter.exceptions import ConfigError
from skitter.extensions.httpcache._entry import CorruptEntry, decode_entry, encode_entry
from skitter.http import Request, Response
from skitter.settings import HttpCacheSettings, Settings
from skitter.utils.wiring import write_whole

__all__ = ["DbmCacheStorage", "FilesystemCacheStorage", "SqliteCacheStorage", "cache_dir"]


def cache_dir(settings: Settings, job_dir: str | Path | None = None) -> Path:
    """HTTPCACHE_DIR made absolute: as is, else in ``job_dir``, else in ``./.skitter``."""
    own = settings.view(HttpCacheSettings)
    path = Path(str(own.httpcache_dir)).expanduser()
    if path.is_absolute():
        return path
    if job_dir is None and own.jobdir:
        job_dir = own.jobdir
    base = Path(job_dir) if job_dir is not None else Path(".skitter")
    return (base / path).absolute()


def _job_dir(crawler: Any) -> Path | None:
    """The crawl's job directory, if it has one (``Crawler.job``; absent on test stand-ins)."""
    path = getattr(getattr(crawler, "job", None), "path", None)
    return Path(path) if path is not None else None


def _safe_name(name: str) -> str:
    """A spider name as one path component (a name is free text)."""
    cleaned = "".join(c if c.isalnum() or c in "-_." else "_" for c in name).strip(".")
    return cleaned or "_"


class _Storage:
    """What both storages share: settings, the directory, the clock, expiry."""

    def __init__(
        self, settings: Settings, directory: Path | None = None, clock: Clock | None = None
    ) -> None:
        self.cachedir = directory if directory is not None else cache_dir(settings)
        own = settings.view(HttpCacheSettings)
        self.expiration_secs = int(own.httpcache_expiration_secs)
        self.use_gzip = bool(own.httpcache_gzip)
        self.clock: Clock = clock or SystemClock()

    @classmethod
    def from_crawler(cls, crawler: Any) -> Any:
        settings = crawler.settings
        return cls(settings, cache_dir(settings, _job_dir(crawler)), crawler.clock)

    def _expired(self, stored: float) -> bool:
        return 0 < self.expiration_secs < self.clock.time() - stored

    def open_spider(self, spider: Any) -> None:
        """Nothing to open by default: directories are made on the first write."""

    def close_spider(self, spider: Any) -> None:
        """Nothing to close by default."""


class FilesystemCacheStorage(_Storage):
    """One file per response: ``<dir>/<spider>/<fp[:2]>/<fingerprint>``.

    The file is the whole entry, so a rename replaces it atomically (Scrapy's layout, a
    directory of six files per response, cannot be replaced in one step)."""

    def __init__(
        self, settings: Settings, directory: Path | None = None, clock: Clock | None = None
    ) -> None:
        super().__init__(settings, directory, clock)
        self._made: set[Path] = set()  # directories known to exist

    def _path(self, spider: Any, request: Request) -> Path:
        """Where ``request``'s entry lives: a subclass's ``_get_request_path`` (Scrapy's
        hook, which scrapy-splash's ``SplashAwareFSCacheStorage`` overrides to key entries
        by the Splash arguments too) when it has one, else by the request's fingerprint."""
        if type(self)._get_request_path is not FilesystemCacheStorage._get_request_path:
            return Path(self._get_request_path(spider, request))
        return self._own_path(spider, request)

    def _own_path(self, spider: Any, request: Request) -> Path:
        key = request.fingerprint.hex()
        name = _safe_name(str(getattr(spider, "name", None) or "default"))
        return self.cachedir / name / key[:2] / key

    def _get_request_path(self, spider: Any, request: Request) -> str:
        """Scrapy's name for where the entry of ``request`` lives (here: one file)."""
        return str(self._own_path(spider, request))

    def retrieve_response(self, spider: Any, request: Request) -> Response | None:
        path = self._path(spider, request)
        try:
            data = path.read_bytes()
        except FileNotFoundError:
            return None
        except IsADirectoryError:
            raise CorruptEntry(f"{path} is a directory (a Scrapy cache?)") from None
        entry = decode_entry(data, request)
        if self._expired(entry.stored):
            return None
        return entry.response

    def store_response(self, spider: Any, request: Request, response: Response) -> None:
        path = self._path(spider, request)
        data = encode_entry(response, self.clock.time(), self.use_gzip)
        if path.parent not in self._made:  # a mkdir per write costs more than the write
            path.parent.mkdir(parents=True, exist_ok=True)
            self._made.add(path.parent)
        write_whole(path, data)


_SCHEMA = """
CREATE TABLE IF NOT EXISTS entries (
    fingerprint BLOB PRIMARY KEY,
    stored REAL NOT NULL,
    entry BLOB NOT NULL
) WITHOUT ROWID
"""


class SqliteCacheStorage(_Storage):
    """One SQLite database per spider: ``<dir>/<spider>.sqlite3``.

    Fewer files than the filesystem storage for a large crawl, and one file to copy.
    A connection is shared by the middleware's threads under a lock: SQLite serialises
    writers anyway, and reads are short."""

    def __init__(
        self, settings: Settings, directory: Path | None = None, clock: Clock | None = None
    ) -> None:
        super().__init__(settings, directory, clock)
        self._lock = threading.Lock()
        self._db: sqlite3.Connection | None = None
        self._name: str | None = None

    def _connect(self, spider: Any) -> sqlite3.Connection:
        name = _safe_name(str(getattr(spider, "name", None) or "default"))
        if self._db is not None and self._name == name:
            return self._db
        if self._db is not None:
            self._db.close()
        self.cachedir.mkdir(parents=True, exist_ok=True)
        path = self.cachedir / f"{name}.sqlite3"
        db = sqlite3.connect(
            path,
            timeout=30.0,
            check_same_thread=False,
            isolation_level=None,  # autocommit; writes open their own transaction
        )
        try:
            db.execute("PRAGMA journal_mode=WAL")
            db.execute("PRAGMA synchronous=NORMAL")
            db.execute(_SCHEMA)
        except sqlite3.DatabaseError as exc:
            db.close()
            raise ConfigError(
                f"HTTP cache database {path} cannot be used ({exc}); move it away to start "
                "an empty cache"
            ) from None
        self._db, self._name = db, name
        return db

    def open_spider(self, spider: Any) -> None:
        with self._lock:
            self._connect(spider)

    def close_spider(self, spider: Any) -> None:
        with self._lock:
            if self._db is not None:
                self._db.close()
                self._db = self._name = None

    def retrieve_response(self, spider: Any, request: Request) -> Response | None:
        with self._lock:
            db = self._connect(spider)
            try:
                row = db.execute(
                    "SELECT stored, entry FROM entries WHERE fingerprint = ?",
                    (request.fingerprint,),
                ).fetchone()
            except sqlite3.DatabaseError as exc:
                raise CorruptEntry(f"cache database: {exc}") from None
        if row is None or self._expired(float(row[0])):
            return None
        return decode_entry(bytes(row[1]), request).response

    def store_response(self, spider: Any, request: Request, response: Response) -> None:
        stored = self.clock.time()
        data = encode_entry(response, stored, self.use_gzip)
        with self._lock:
            db = self._connect(spider)
            with db:  # BEGIN ... COMMIT, or ROLLBACK on error
                db.execute("BEGIN IMMEDIATE")
                db.execute(
                    "INSERT OR REPLACE INTO entries (fingerprint, stored, entry) VALUES (?, ?, ?)",
                    (request.fingerprint, stored, data),
                )


class _Fingerprinter:
    """Scrapy's ``_fingerprinter``: the request's fingerprint, as the storages key it."""

    @staticmethod
    def fingerprint(request: Request) -> bytes:
        return request.fingerprint


class DbmCacheStorage(_Storage):
    """Scrapy's DBM storage: one database per spider, ``<dir>/<spider>.db``, opened with
    HTTPCACHE_DBM_MODULE (the stdlib ``dbm`` by default).

    Keys are Scrapy's (``<fingerprint>_time``, ``<fingerprint>_data``); the data is the
    entry every storage writes, never a pickle, so a cache file cannot run code when it
    is read. DBM modules are not safe for threads, so every call holds a lock."""

    def __init__(
        self, settings: Settings, directory: Path | None = None, clock: Clock | None = None
    ) -> None:
        super().__init__(settings, directory, clock)
        self.dbmodule: ModuleType = importlib.import_module(
            settings.view(HttpCacheSettings).httpcache_dbm_module
        )
        self._fingerprinter = _Fingerprinter()
        self._lock = threading.Lock()
        self.db: Any = None

    def open_spider(self, spider: Any) -> None:
        name = _safe_name(str(getattr(spider, "name", None) or "default"))
        self.cachedir.mkdir(parents=True, exist_ok=True)
        with self._lock:
            self.db = self.dbmodule.open(str(self.cachedir / f"{name}.db"), "c")

    def close_spider(self, spider: Any) -> None:
        with self._lock:
            if self.db is not None:
                self.db.close()
                self.db = None

    def _opened(self, spider: Any) -> Any:
        if self.db is None:
            raise RuntimeError("DbmCacheStorage used before open_spider")
        return self.db

    def retrieve_response(self, spider: Any, request: Request) -> Response | None:
        key = request.fingerprint.hex()
        with self._lock:
            db = self._opened(spider)
            stored, data = db.get(f"{key}_time"), db.get(f"{key}_data")
        if stored is None or data is None:
            return None
        if self._expired(float(stored)):
            return None
        return decode_entry(bytes(data), request).response

    def store_response(self, spider: Any, request: Request, response: Response) -> None:
        key = request.fingerprint.hex()
        stored = self.clock.time()
        data = encode_entry(response, stored, self.use_gzip)
        with self._lock:
            db = self._opened(spider)
            db[f"{key}_data"] = data
            db[f"{key}_time"] = str(stored)
