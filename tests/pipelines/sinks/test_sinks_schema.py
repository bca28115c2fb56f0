"""Tables: created from the item class when asked, or an existing one mapped onto and
checked before anything is crawled. A missing column, a column of the wrong type, a
key without a unique index and a missing table are refused at start, naming them."""

from __future__ import annotations

import sqlite3
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pytest

from skitter.exceptions import ConfigError, StorageError
from skitter.pipelines._sinks import build_sinks
from skitter.settings import Settings
from skitter.testing import TestCrawler


@dataclass
class Product:
    sku: str = field(metadata={"key": True})
    price: float | None = None
    stock: int = 0


async def opened(uri: str, **options: Any) -> Any:
    crawler = TestCrawler(Settings({"SINKS": {uri: options}}))
    (sink,) = build_sinks(crawler)
    await sink.open_spider(None)
    return sink


def sqlite_table(path: Path, ddl: str) -> str:
    with sqlite3.connect(path) as db:
        db.execute(ddl)
    return f"sqlite:{path}?table=products"


@pytest.mark.parametrize(
    ("ddl", "message"),
    [
        ("CREATE TABLE products (sku TEXT PRIMARY KEY, price REAL)",
         "table 'products' has no column 'stock'"),
        ("CREATE TABLE products (sku TEXT PRIMARY KEY, price REAL, stock TEXT)",
         "column 'stock' of table 'products' is text, which cannot hold the field's int"),
        ("CREATE TABLE products (sku TEXT, price REAL, stock INTEGER)",
         r"no unique index on \['sku'\]"),
    ],
)  # fmt: skip
async def test_an_existing_table_that_does_not_fit_is_refused_at_start(
    tmp_path: Path, ddl: str, message: str
) -> None:
    uri = sqlite_table(tmp_path / "shop.db", ddl)
    with pytest.raises(ConfigError, match=message):
        await opened(uri, item_classes=[Product])


async def test_a_missing_table_is_refused_unless_create_is_set(pg_uri: str) -> None:
    with pytest.raises(ConfigError, match="table 'products' does not exist; create it"):
        await opened(f"{pg_uri}?table=products", item_classes=[Product])


async def test_an_existing_table_is_mapped_onto_by_its_key(tmp_path: Path) -> None:
    uri = sqlite_table(
        tmp_path / "shop.db",
        "CREATE TABLE products (sku TEXT PRIMARY KEY, price REAL, stock INTEGER, "
        "seen TEXT DEFAULT 'never')",
    )
    sink = await opened(uri, item_classes=[Product])
    await sink.take(Product("A", 1.5, 3), "t/0")
    await sink.take(Product("B", None, 0), "t/1")
    await sink.take(Product("A", 2.5, 1), "t/2")  # the same product, again: an update
    await sink.close_spider(None)
    with sqlite3.connect(tmp_path / "shop.db") as db:
        rows = db.execute("SELECT sku, price, stock, seen FROM products ORDER BY sku").fetchall()
    assert rows == [("A", 2.5, 1, "never"), ("B", None, 0, "never")]


async def test_a_field_without_a_column_or_a_json_column_fails_the_item(tmp_path: Path) -> None:
    uri = sqlite_table(tmp_path / "shop.db", "CREATE TABLE products (sku TEXT PRIMARY KEY)")
    sink = await opened(uri)  # no item class: the table's columns are the fields
    await sink.take({"sku": "A"}, "t/0")
    with pytest.raises(StorageError, match=r"no column for field\(s\) \['colour'\]"):
        await sink.take({"sku": "B", "colour": "red"}, "t/1")
    await sink.close_spider(None)


async def test_postgresql_refuses_a_column_of_the_wrong_type_naming_it(pg_uri: str) -> None:
    import psycopg

    async with await psycopg.AsyncConnection.connect(pg_uri, autocommit=True) as conn:
        await conn.execute(b"CREATE TABLE products (sku text PRIMARY KEY, price text, stock int)")
    with pytest.raises(ConfigError, match="column 'price' of table 'products' is text"):
        await opened(f"{pg_uri}?table=products", item_classes=[Product])


async def test_mysql_creates_typed_columns_from_the_item_class(mysql_uri: str) -> None:
    import aiomysql

    sink = await opened(f"{mysql_uri}?table=products", item_classes=[Product], create=True)
    await sink.take(Product("A", 1.5, 3), "t/0")
    await sink.take(Product("A", 2.0, 4), "t/1")
    await sink.close_spider(None)
    address, _, database = mysql_uri.removeprefix("mysql://root@").partition("/")
    host, _, port = address.partition(":")
    conn = await aiomysql.connect(host=host, port=int(port), user="root", db=database)
    try:
        async with conn.cursor() as cur:
            await cur.execute(
                "SELECT COLUMN_NAME, DATA_TYPE, COLUMN_KEY FROM information_schema.COLUMNS "
                "WHERE TABLE_SCHEMA = DATABASE() AND TABLE_NAME = 'products'"
            )
            columns = {name: (kind, key) for name, kind, key in await cur.fetchall()}
            await cur.execute("SELECT sku, price, stock FROM products")
            rows = await cur.fetchall()
    finally:
        conn.close()
    assert columns["sku"] == ("varchar", "PRI")
    assert columns["price"][0] == "double" and columns["stock"][0] == "bigint"
    assert rows == (("A", 2.0, 4),)


async def test_a_key_without_an_item_class_keys_the_id_column_run_after_run(
    tmp_path: Path,
) -> None:
    uri = f"sqlite:{tmp_path / 'shop.db'}?table=products"
    for price in (1.0, 2.0):  # the second run finds the table the first one created
        sink = await opened(uri, key="sku,shop")
        await sink.take({"sku": "A", "shop": 1, "price": price}, f"t/{price}")
        await sink.close_spider(None)
    with sqlite3.connect(tmp_path / "shop.db") as db:
        rows = db.execute("SELECT item_id, json_extract(data, '$.price') FROM products").fetchall()
    assert rows == [('["A",1]', 2.0)]
