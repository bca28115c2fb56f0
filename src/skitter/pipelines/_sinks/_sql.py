"""What the SQL sinks share: the table's layout, the rows, the upsert statement.

Each dialect (PostgreSQL, MySQL/MariaDB, SQLite) says how it quotes names, marks
parameters, types columns and upserts; ``SqlSink`` reads the table (``table_shape``),
creates it when asked and missing, checks it against the item class (``_schema``), and
turns each item into one row of the layout: the identity or the key fields, the typed
columns, and a json column with the fields that have no column of their own.
"""

from __future__ import annotations

import datetime
import decimal
from collections.abc import Callable, Mapping
from typing import Any

from skitter.exceptions import StorageError
from skitter.pipelines._exporters import dumps_item_json, dumps_json
from skitter.pipelines._sinks._core import Sink
from skitter.pipelines._sinks._schema import Layout, TableShape, plan

__all__ = ["SqlSink"]

_CONTAINERS = (list, tuple, dict, set, frozenset)


class SqlSink(Sink):
    """A sink into a SQL table; subclasses are the dialects."""

    #: How a name is quoted (the quote character, doubled inside).
    QUOTE = '"'
    PARAM = "%s"
    #: Column type per family; ``KEY_TYPES`` overrides it for key columns.
    TYPES: Mapping[str, str] = {}
    KEY_TYPES: Mapping[str, str] = {}
    #: Which column families can hold a field family, where the dialect differs.
    ACCEPTS: Mapping[str, frozenset[str]] = {}
    layout: Layout | None = None
    _sql = ""

    # -- what dialects implement --------------------------------------------------------
    async def table_shape(self) -> TableShape | None:
        """The table as the database describes it; None if there is none."""
        raise NotImplementedError

    async def execute(self, statement: str) -> None:
        """Run one statement (DDL) and commit."""
        raise NotImplementedError

    def upsert(self, table: str, columns: list[str], key: list[str], update: list[str]) -> str:
        raise NotImplementedError

    # -- shared -------------------------------------------------------------------------
    def quote(self, name: str) -> str:
        q = self.QUOTE
        return ".".join(q + part.replace(q, q + q) + q for part in name.split("."))

    async def prepare(self) -> None:
        """Read the table, create it if asked and missing, and fix the layout (after the
        subclass connected). ConfigError if the table does not fit the items."""
        shape = await self.table_shape()
        if shape is None:
            created = plan(self.options, None, self.ACCEPTS)
            try:
                await self.execute(self.create_table(created))
            except Exception:
                if await self.table_shape() is None:
                    raise
                # another worker created it at the same moment: checked below
            shape = await self.table_shape()
        layout = plan(self.options, shape, self.ACCEPTS)
        names = [name for name, _family in layout.columns]
        update = [name for name in names if name not in layout.key]
        self._sql = self.upsert(
            self.quote(self.options.target),
            [self.quote(n) for n in names],
            [self.quote(n) for n in layout.key],
            [self.quote(n) for n in update],
        )
        self.layout = layout
        self._encoders = [self._encoder(name, family, layout) for name, family in layout.columns]
        self._fields = set(layout.fields)

    def create_table(self, layout: Layout) -> str:
        parts = []
        for name, family in layout.columns:
            kind = (self.KEY_TYPES if name in layout.key else {}).get(family) or self.TYPES[family]
            null = " NOT NULL" if name in layout.key else ""
            parts.append(f"{self.quote(name)} {kind}{null}")
        parts.append(f"PRIMARY KEY ({', '.join(self.quote(n) for n in layout.key)})")
        return f"CREATE TABLE IF NOT EXISTS {self.quote(self.options.target)} ({', '.join(parts)})"

    def encode(self, data: dict[str, Any], identity: Callable[[], str], item: Any) -> Any:
        extras = None
        if len(data) > len(self._fields) or any(name not in self._fields for name in data):
            extras = {name: value for name, value in data.items() if name not in self._fields}
            if self.layout is not None and self.layout.json_column is None:
                raise StorageError(
                    f"{self.where}: table {self.options.target!r} has no column for field(s) "
                    f"{sorted(extras)} of a {type(item).__name__} item, and no json column "
                    f"({self.options.json_column!r}) to hold them"
                )
        return tuple(encode(data, extras, identity) for encode in self._encoders)

    def _encoder(self, name: str, family: str, layout: Layout) -> Callable[..., Any]:
        """How one column's value is made from an item (its data, its fields without a
        column, its identity)."""
        if layout.by_id and name in layout.key:
            return lambda data, extras, identity: identity()
        if name == layout.json_column:
            return lambda data, extras, identity: None if extras is None else self._json(extras)
        if name in layout.key:

            def key_value(data: dict[str, Any], extras: Any, identity: Any) -> Any:
                value = data.get(name)
                if value is None:
                    raise StorageError(
                        f"{self.where}: an item has no value for its key field {name!r}, so "
                        "it cannot be written exactly once"
                    )
                return self.value(name, value, family)

            return key_value
        return lambda data, extras, identity: self.value(name, data.get(name), family)

    def value(self, name: str, value: Any, family: str) -> Any:
        """A field's value as the dialect takes it for a column of ``family``."""
        if value is None:
            return None
        if family == "json":
            return self._json(value)
        if isinstance(value, _CONTAINERS):
            raise StorageError(
                f"{self.where}: field {name!r} holds a {type(value).__name__}, which its "
                f"{family} column cannot; declare the field as a list or dict to keep it "
                "as json"
            )
        return self.plain(value)

    def plain(self, value: Any) -> Any:
        """A plain value as the driver binds it (dialects convert what theirs cannot)."""
        return value

    def _json(self, value: Any) -> str:
        try:
            out = dumps_json(value)
            if b"null" in out:
                dumps_item_json({"value": value})  # NaN and infinities: ValueError
        except ValueError as exc:
            raise StorageError(f"{self.where}: an item cannot be written as JSON: {exc}") from exc
        return out.decode()


def naive_utc(value: Any) -> Any:
    """A timezone-aware datetime as naive UTC (MySQL's DATETIME keeps no zone)."""
    if isinstance(value, datetime.datetime) and value.tzinfo is not None:
        return value.astimezone(datetime.UTC).replace(tzinfo=None)
    return value


def iso(value: Any) -> Any:
    """Dates and decimals as text (SQLite has no such types)."""
    if isinstance(value, datetime.date | datetime.time):
        return value.isoformat()
    if isinstance(value, decimal.Decimal):
        return str(value)
    return value
