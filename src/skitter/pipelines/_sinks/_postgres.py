"""Items into PostgreSQL with psycopg 3: ``INSERT ... ON CONFLICT (key) DO UPDATE``.

One connection, one transaction per batch (``executemany``, which psycopg sends in
pipeline mode: one round trip for the batch). A connection that fails or a
serialization failure or deadlock (two workers upserting the same rows) is an outage:
the batch is tried again on a new connection.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from skitter.pipelines._sinks._schema import TableShape
from skitter.pipelines._sinks._sql import SqlSink

if TYPE_CHECKING:
    import psycopg

__all__ = ["PostgresSink"]

_FAMILIES = {
    "text": "text", "character varying": "text", "character": "text",
    "bigint": "int", "integer": "int", "smallint": "int",
    "double precision": "float", "real": "float", "numeric": "numeric",
    "boolean": "bool", "bytea": "bytes", "date": "date",
    "timestamp with time zone": "timestamp", "timestamp without time zone": "timestamp",
    "json": "json", "jsonb": "json",
}  # fmt: skip
_COLUMNS = """
SELECT column_name::text, data_type::text FROM information_schema.columns
WHERE table_schema = coalesce(%s, current_schema()) AND table_name = %s
"""
_UNIQUE = """
SELECT i.indisprimary, array_agg(a.attname::text ORDER BY array_position(i.indkey, a.attnum))
FROM pg_index i JOIN pg_attribute a ON a.attrelid = i.indrelid AND a.attnum = ANY(i.indkey)
WHERE i.indrelid = to_regclass(%s) AND i.indisunique AND i.indpred IS NULL
GROUP BY i.indexrelid, i.indisprimary
"""


class PostgresSink(SqlSink):
    """A PostgreSQL table (``postgresql://user:pass@host:5432/db?table=items``)."""

    TYPES = {
        "text": "TEXT", "int": "BIGINT", "float": "DOUBLE PRECISION", "bool": "BOOLEAN",
        "bytes": "BYTEA", "timestamp": "TIMESTAMPTZ", "date": "DATE", "numeric": "NUMERIC",
        "json": "JSONB",
    }  # fmt: skip
    _conn: psycopg.AsyncConnection[Any] | None = None

    async def connect(self) -> None:
        import psycopg

        self._conn = await psycopg.AsyncConnection.connect(
            self.options.connect, connect_timeout=10, autocommit=False
        )
        if self.layout is None:
            await self.prepare()

    async def table_shape(self) -> TableShape | None:
        assert self._conn is not None
        schema, _, table = self.options.target.rpartition(".")
        async with self._conn.cursor() as cur:
            await cur.execute(_COLUMNS, (schema or None, table))
            columns = {name: _FAMILIES.get(kind) for name, kind in await cur.fetchall()}
            if not columns:
                await self._conn.rollback()
                return None
            await cur.execute(_UNIQUE, (self.quote(self.options.target),))
            indexes = await cur.fetchall()
        await self._conn.rollback()
        primary = next((tuple(cols) for is_primary, cols in indexes if is_primary), ())
        return TableShape(columns, primary, tuple(frozenset(cols) for _p, cols in indexes))

    async def execute(self, statement: str) -> None:
        assert self._conn is not None
        try:
            await self._conn.execute(statement.encode())
            await self._conn.commit()
        except BaseException:
            await self._conn.rollback()
            raise

    def upsert(self, table: str, columns: list[str], key: list[str], update: list[str]) -> str:
        values = ", ".join(["%s"] * len(columns))
        action = (
            "DO UPDATE SET " + ", ".join(f"{c} = EXCLUDED.{c}" for c in update)
            if update
            else "DO NOTHING"
        )
        return (
            f"INSERT INTO {table} ({', '.join(columns)}) VALUES ({values}) "
            f"ON CONFLICT ({', '.join(key)}) {action}"
        )

    async def write(self, batch: list[Any]) -> None:
        assert self._conn is not None
        async with self._conn.cursor() as cur:
            await cur.executemany(self._sql.encode(), batch)
        await self._conn.commit()

    def transient(self, exc: BaseException) -> bool:
        from psycopg import OperationalError  # with TransactionRollback: deadlocks

        return isinstance(exc, OperationalError | OSError | TimeoutError)

    async def disconnect(self) -> None:
        conn, self._conn = self._conn, None
        if conn is not None:
            await conn.close()
