"""Items into an SQLite file: the embedded sink, ``INSERT ... ON CONFLICT DO UPDATE``.

``sqlite:`` alone keeps ``items.sqlite3`` in the job directory; ``sqlite:items.db`` or
``sqlite:///abs/items.db`` names the file. The standard library's sqlite3 runs in a
thread (one at a time: the writer's), in WAL mode with a long busy timeout, so that
several workers on one machine can share the file. The table is created from the item
class by default (``create`` is true here). A database that is locked for longer than
the busy timeout is an outage like a server out of reach.
"""

from __future__ import annotations

import asyncio
import sqlite3
from pathlib import Path
from typing import Any

from skitter.pipelines._sinks._schema import TableShape
from skitter.pipelines._sinks._sql import SqlSink, iso

__all__ = ["SqliteSink"]

_BUSY_MS = 30_000


def _affinity(declared: str) -> str:
    """SQLite's type affinity of a declared column type, as a family."""
    kind = declared.upper()
    if "INT" in kind:
        return "int"
    if any(word in kind for word in ("CHAR", "CLOB", "TEXT")):
        return "text"
    if not kind or "BLOB" in kind:
        return "bytes"
    if any(word in kind for word in ("REAL", "FLOA", "DOUB")):
        return "float"
    return "numeric"


class SqliteSink(SqlSink):
    """A table in an SQLite file."""

    TYPES = {
        "text": "TEXT", "int": "INTEGER", "float": "REAL", "bool": "INTEGER", "bytes": "BLOB",
        "timestamp": "TEXT", "date": "TEXT", "numeric": "TEXT", "json": "TEXT",
    }  # fmt: skip
    #: What SQLite stores each field family as.
    ACCEPTS = {
        "bool": frozenset({"int", "numeric"}),
        "int": frozenset({"int", "numeric"}),
        "timestamp": frozenset({"text"}),
        "date": frozenset({"text"}),
        "numeric": frozenset({"text", "numeric"}),
        "json": frozenset({"text"}),
    }
    PARAM = "?"
    _db: sqlite3.Connection | None = None

    async def connect(self) -> None:
        self._db = await asyncio.to_thread(self._open)
        if self.layout is None:
            await self.prepare()

    def _open(self) -> sqlite3.Connection:
        path = Path(self.options.connect)
        path.parent.mkdir(parents=True, exist_ok=True)
        db = sqlite3.connect(path, timeout=_BUSY_MS / 1000, check_same_thread=False)
        db.execute(f"PRAGMA busy_timeout = {_BUSY_MS}")
        db.execute("PRAGMA journal_mode = WAL")
        db.execute("PRAGMA synchronous = FULL")  # a committed batch survives a power cut
        return db

    async def table_shape(self) -> TableShape | None:
        return await asyncio.to_thread(self._shape)

    def _shape(self) -> TableShape | None:
        assert self._db is not None
        table = self.quote(self.options.target)
        rows = self._db.execute(f"PRAGMA table_info({table})").fetchall()
        if not rows:
            return None
        columns = {name: _affinity(kind) for _cid, name, kind, _nn, _dflt, _pk in rows}
        primary = tuple(name for _c, name, _k, _n, _d, pk in sorted(rows, key=lambda r: r[5]) if pk)
        unique = [frozenset(primary)] if primary else []
        for _seq, index, is_unique, *_rest in self._db.execute(f"PRAGMA index_list({table})"):
            if is_unique:
                info = self._db.execute(f"PRAGMA index_info({self.quote(index)})").fetchall()
                unique.append(frozenset(name for _s, _c, name in info))
        return TableShape(columns, primary, tuple(unique))

    async def execute(self, statement: str) -> None:
        await asyncio.to_thread(self._execute, statement)

    def _execute(self, statement: str) -> None:
        assert self._db is not None
        with self._db:
            self._db.execute(statement)

    def upsert(self, table: str, columns: list[str], key: list[str], update: list[str]) -> str:
        values = ", ".join(["?"] * len(columns))
        action = (
            "DO UPDATE SET " + ", ".join(f"{c} = excluded.{c}" for c in update)
            if update
            else "DO NOTHING"
        )
        return (
            f"INSERT INTO {table} ({', '.join(columns)}) VALUES ({values}) "
            f"ON CONFLICT ({', '.join(key)}) {action}"
        )

    def plain(self, value: Any) -> Any:
        return iso(value)

    async def write(self, batch: list[Any]) -> None:
        await asyncio.to_thread(self._write, batch)

    def _write(self, batch: list[Any]) -> None:
        assert self._db is not None
        with self._db:  # one transaction: committed, or rolled back on an error
            self._db.executemany(self._sql, batch)

    def transient(self, exc: BaseException) -> bool:
        if isinstance(exc, sqlite3.OperationalError):
            text = str(exc).lower()
            return "locked" in text or "busy" in text
        return False

    async def disconnect(self) -> None:
        db, self._db = self._db, None
        if db is not None:
            await asyncio.to_thread(db.close)
