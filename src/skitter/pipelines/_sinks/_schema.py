"""Tables for items: made from an item class, or an existing one checked against it.

Columns are of a few families (text, int, float, bool, bytes, timestamp, date,
numeric, json); a field's family comes from its type annotation (``str``, ``int``,
``float``, ``bool``, ``bytes``, ``datetime``, ``date``, ``Decimal``, optionally
``| None``), and everything else (lists, dicts, nested items, ``Any``, a Scrapy
``Field()``, which has no type) is json. A created table has one typed column per field
of the item class, its key as the primary key (or an id column holding the item's
identity), and a json column for fields the class does not declare. An item without a
class (a dict sink with no ``item_classes``) goes into ``(id, json)``.

An existing table is read first: a field of the item class whose column is missing (and
no json column to hold it), or whose column is of a family that cannot hold it, is
refused before the crawl starts, naming the column; so is a key without a unique index
(an upsert needs one to find the row it replaces).
"""

from __future__ import annotations

import dataclasses
import datetime
import decimal
import types
import typing
from collections.abc import Mapping
from typing import Any

from skitter.exceptions import ConfigError
from skitter.items import adapter_class
from skitter.pipelines._sinks._identity import declared_key
from skitter.pipelines._sinks._options import SinkOptions

__all__ = ["Layout", "TableShape", "field_families", "plan"]

_BY_TYPE: Mapping[Any, str] = {
    str: "text",
    int: "int",
    float: "float",
    bool: "bool",
    bytes: "bytes",
    datetime.datetime: "timestamp",
    datetime.date: "date",
    decimal.Decimal: "numeric",
}
#: The column families that can hold a field of each family, as stored.
_ACCEPTS: Mapping[str, frozenset[str]] = {
    "text": frozenset({"text"}),
    "int": frozenset({"int", "numeric"}),
    "float": frozenset({"float", "numeric"}),
    "bool": frozenset({"bool", "int"}),
    "bytes": frozenset({"bytes"}),
    "timestamp": frozenset({"timestamp"}),
    "date": frozenset({"date", "timestamp"}),
    "numeric": frozenset({"numeric"}),
    "json": frozenset({"json"}),
}


@dataclasses.dataclass(frozen=True, slots=True)
class TableShape:
    """An existing table as the database describes it."""

    #: Column name to family (``None`` for a type skitter has no family for).
    columns: Mapping[str, str | None]
    primary: tuple[str, ...]
    #: The column sets of its unique indexes, the primary key's included.
    unique: tuple[frozenset[str], ...]


@dataclasses.dataclass(frozen=True, slots=True)
class Layout:
    """What a SQL sink writes: its columns in order, with their families."""

    columns: tuple[tuple[str, str], ...]
    #: The columns an upsert finds the row by.
    key: tuple[str, ...]
    #: Whether ``key`` is the id column (the identity as text) or item fields.
    by_id: bool
    #: The column for fields that have none of their own (None: there is none).
    json_column: str | None

    @property
    def fields(self) -> dict[str, str]:
        """Item fields with a column of their own, and the column's family."""
        skip = {self.json_column, *(self.key if self.by_id else ())}
        return {name: family for name, family in self.columns if name not in skip}


def field_families(cls: type) -> dict[str, str]:
    """Each field of ``cls`` and its column family, in the class's order."""
    adapter = adapter_class()
    names = [str(n) for n in adapter.get_field_names_from_class(cls) or ()]
    try:
        hints = typing.get_type_hints(cls)
    except Exception:  # a forward reference that does not resolve: no types, then
        hints = {}
    out = {}
    for name in names:
        annotation = hints.get(name, adapter.get_field_meta_from_class(cls, name).get("annotation"))
        out[name] = _family(annotation)
    return out


def _family(annotation: Any) -> str:
    if annotation in _BY_TYPE:
        return _BY_TYPE[annotation]
    origin = typing.get_origin(annotation)
    if origin is typing.Union or origin is types.UnionType:
        args = [a for a in typing.get_args(annotation) if a is not type(None)]
        if len(args) == 1:
            return _family(args[0])
    if origin is typing.Annotated:
        return _family(typing.get_args(annotation)[0])
    return "json"


def plan(
    options: SinkOptions, shape: TableShape | None, accepts: Mapping[str, frozenset[str]]
) -> Layout:
    """The layout to write with, for the table as it is (``shape``; None if missing).
    ``accepts`` overrides, for a dialect, the column families that can hold a field
    family (SQLite keeps dates as text). ConfigError naming the table and column when
    they do not fit."""
    cls = options.item_classes[0] if options.item_classes else None
    key = options.key or (declared_key(cls) if cls is not None else ())
    families = field_families(cls) if cls is not None else {}
    where = f"sink {options.label} ({options.shown})"
    if shape is None:
        return _new_table(options, families, key, where)
    return _existing_table(options, shape, families, key, accepts, where)


def _new_table(
    options: SinkOptions, families: dict[str, str], key: tuple[str, ...], where: str
) -> Layout:
    if not options.create:
        raise ConfigError(
            f"{where}: table {options.target!r} does not exist; create it, or set 'create': "
            "True to have skitter make it from the item class"
        )
    json_column = options.json_column
    if not families:  # no item class: the identity and the item as json
        columns = ((options.id_column, "text"), (json_column, "json"))
        return Layout(columns, (options.id_column,), True, json_column)
    missing = [name for name in key if name not in families]
    if missing:
        raise ConfigError(f"{where}: key field(s) {missing} are not fields of the item class")
    by_id = not key
    if by_id:
        key = (options.id_column,)
        families = {options.id_column: "text", **families}
    if json_column in families:
        raise ConfigError(f"{where}: the item class has a field {json_column!r}, the name of "
                          "the json column; set 'json_column' to another name")  # fmt: skip
    return Layout((*families.items(), (json_column, "json")), key, by_id, json_column)


def _existing_table(
    options: SinkOptions,
    shape: TableShape,
    families: dict[str, str],
    key: tuple[str, ...],
    accepts: Mapping[str, frozenset[str]],
    where: str,
) -> Layout:
    table = options.target
    columns = shape.columns
    json_family = columns.get(options.json_column)
    json_column = options.json_column if json_family in ("json", "text") else None
    by_id = False
    keyed_by_id = shape.primary == (options.id_column,)
    if not key or (not families and keyed_by_id and any(k not in columns for k in key)):
        # the table's own key; an (id, json) table holds the identity of the key's values
        key = shape.primary
        if not key:
            raise ConfigError(f"{where}: table {table!r} has no primary key; give the 'key' fields")
        by_id = key == (options.id_column,) and options.id_column not in families
    for name in key:
        if name not in columns:
            raise ConfigError(f"{where}: table {table!r} has no column {name!r} (the key)")
    if frozenset(key) not in shape.unique:
        raise ConfigError(
            f"{where}: table {table!r} has no unique index on {list(key)}, which an upsert "
            "needs to find the row an item replaces"
        )
    if not families:  # no item class: every column other than the id and json ones
        families = {
            name: family or "json"
            for name, family in columns.items()
            if name != json_column and not (by_id and name in key)
        }
        if by_id and json_column is None:
            raise ConfigError(
                f"{where}: table {table!r} is keyed by {options.id_column!r} but has no json "
                f"column {options.json_column!r} for the items"
            )
    for name, family in families.items():
        found = columns.get(name, "missing")
        if found == "missing":
            if json_column is None:
                raise ConfigError(f"{where}: table {table!r} has no column {name!r}")
            continue
        if found is None or found not in accepts.get(family, _ACCEPTS[family]):
            raise ConfigError(
                f"{where}: column {name!r} of table {table!r} is {found or 'of another type'}, "
                f"which cannot hold the field's {family} values"
            )
    kept = {name: family for name, family in families.items() if name in columns}
    ordered = [(name, "text") for name in key if by_id] + list(kept.items())
    if json_column is not None:
        ordered.append((json_column, "json"))
    return Layout(tuple(ordered), key, by_id, json_column)
