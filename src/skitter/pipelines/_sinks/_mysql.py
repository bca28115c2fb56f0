"""Items into MySQL or MariaDB with aiomysql: ``INSERT ... ON DUPLICATE KEY UPDATE``.

One connection, one transaction per batch (``executemany``, which aiomysql sends as one
multi-row INSERT). A lost or refused connection, a lock wait timeout or a deadlock is an
outage: the batch is tried again on a new connection. The URI is
``mysql://user:pass@host:3306/database?table=items`` (``mariadb://`` too); text key
columns are VARCHAR(255), timestamps DATETIME(6) in UTC.
"""

from __future__ import annotations

import contextlib
from typing import Any
from urllib.parse import unquote, urlsplit

from skitter.exceptions import ConfigError
from skitter.pipelines._sinks._schema import TableShape
from skitter.pipelines._sinks._sql import SqlSink, naive_utc

__all__ = ["MysqlSink"]

_FAMILIES = {
    "varchar": "text", "char": "text", "text": "text", "tinytext": "text",
    "mediumtext": "text", "longtext": "text",
    "bigint": "int", "int": "int", "mediumint": "int", "smallint": "int", "tinyint": "int",
    "double": "float", "float": "float", "decimal": "numeric",
    "blob": "bytes", "longblob": "bytes", "mediumblob": "bytes", "tinyblob": "bytes",
    "varbinary": "bytes", "binary": "bytes",
    "datetime": "timestamp", "timestamp": "timestamp", "date": "date", "json": "json",
}  # fmt: skip
#: MySQL error codes that waiting cures: the server gone or out of reach, lock waits.
_TRANSIENT_CODES = frozenset({1040, 1053, 1205, 1213, 2002, 2003, 2006, 2013, 2055})
_COLUMNS = """
SELECT COLUMN_NAME, DATA_TYPE, COLUMN_TYPE FROM information_schema.COLUMNS
WHERE TABLE_SCHEMA = DATABASE() AND TABLE_NAME = %s
"""
_UNIQUE = """
SELECT INDEX_NAME, COLUMN_NAME FROM information_schema.STATISTICS
WHERE TABLE_SCHEMA = DATABASE() AND TABLE_NAME = %s AND NON_UNIQUE = 0
ORDER BY INDEX_NAME, SEQ_IN_INDEX
"""


def _family(kind: str, full: str) -> str | None:
    """A column's family; TINYINT(1) is MySQL's BOOLEAN."""
    return "bool" if full.lower() == "tinyint(1)" else _FAMILIES.get(kind.lower())


class MysqlSink(SqlSink):
    """A MySQL or MariaDB table."""

    QUOTE = "`"
    TYPES = {
        "text": "LONGTEXT", "int": "BIGINT", "float": "DOUBLE", "bool": "BOOLEAN",
        "bytes": "LONGBLOB", "timestamp": "DATETIME(6)", "date": "DATE",
        "numeric": "DECIMAL(65,10)", "json": "JSON",
    }  # fmt: skip
    KEY_TYPES = {"text": "VARCHAR(255)", "bytes": "VARBINARY(255)"}
    #: MariaDB's JSON is LONGTEXT with a check.
    ACCEPTS = {"json": frozenset({"json", "text"})}
    _conn: Any = None

    def _params(self) -> dict[str, Any]:
        parts = urlsplit(self.options.connect)
        if parts.query:
            raise ConfigError(f"{self.where}: unknown option(s) in the URI: {parts.query!r}")
        database = parts.path.lstrip("/")
        if not database:
            raise ConfigError(f"{self.where}: the URI names no database (mysql://host/DB)")
        return {
            "host": parts.hostname or "127.0.0.1",
            "port": parts.port or 3306,
            "user": unquote(parts.username or "root"),
            "password": unquote(parts.password or ""),
            "db": database,
        }

    async def connect(self) -> None:
        import aiomysql

        self._conn = await aiomysql.connect(
            **self._params(), autocommit=False, charset="utf8mb4", connect_timeout=10
        )
        if self.layout is None:
            await self.prepare()

    async def table_shape(self) -> TableShape | None:
        table = self.options.target
        async with self._conn.cursor() as cur:
            await cur.execute(_COLUMNS, (table,))
            columns = {
                name: _family(str(kind), str(full)) for name, kind, full in await cur.fetchall()
            }
            await cur.execute(_UNIQUE, (table,))
            indexes: dict[str, list[str]] = {}
            for index, column in await cur.fetchall():
                indexes.setdefault(index, []).append(column)
        await self._conn.rollback()
        if not columns:
            return None
        primary = tuple(indexes.get("PRIMARY", ()))
        return TableShape(columns, primary, tuple(frozenset(c) for c in indexes.values()))

    async def execute(self, statement: str) -> None:
        async with self._conn.cursor() as cur:
            await cur.execute(statement)
        await self._conn.commit()

    def upsert(self, table: str, columns: list[str], key: list[str], update: list[str]) -> str:
        values = ", ".join(["%s"] * len(columns))
        changes = update or key[:1]
        return (
            f"INSERT INTO {table} ({', '.join(columns)}) VALUES ({values}) "
            f"ON DUPLICATE KEY UPDATE {', '.join(f'{c} = VALUES({c})' for c in changes)}"
        )

    def plain(self, value: Any) -> Any:
        return naive_utc(value)

    async def write(self, batch: list[Any]) -> None:
        try:
            async with self._conn.cursor() as cur:
                await cur.executemany(self._sql, batch)
            await self._conn.commit()
        except BaseException:
            if self._conn is not None and not self._conn.closed:
                with contextlib.suppress(Exception):  # a broken one is dropped next
                    await self._conn.rollback()
            raise

    def transient(self, exc: BaseException) -> bool:
        import pymysql

        if isinstance(exc, OSError | TimeoutError | pymysql.err.InterfaceError):
            return True
        if isinstance(exc, pymysql.err.OperationalError | pymysql.err.InternalError):
            return bool(exc.args) and exc.args[0] in _TRANSIENT_CODES
        return False

    async def disconnect(self) -> None:
        conn, self._conn = self._conn, None
        if conn is not None:
            conn.close()
