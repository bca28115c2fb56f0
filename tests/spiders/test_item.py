"""skitter.item: Scrapy's Item and Field semantics, and Items through the pipelines."""

from __future__ import annotations

import copy
import csv
import pickle
from pathlib import Path
from typing import Any

import orjson
import pytest
from itemadapter import ItemAdapter

import skitter
from skitter import Response
from skitter.item import Field, Item
from skitter.items import is_item, item_to_dict

from ._site import Site, crawl_items


class Product(Item):
    name = Field(serializer=str)
    price = Field()
    tags = Field()


def test_declared_keys_only() -> None:
    item = Product(name="pen")
    item["price"] = 2
    assert item["name"] == "pen" and item["price"] == 2
    with pytest.raises(KeyError, match="Product does not support field: colour"):
        item["colour"] = "red"
    with pytest.raises(KeyError):
        Product({"name": "x", "colour": "red"})
    with pytest.raises(KeyError):
        item["tags"]  # declared, but not set
    del item["price"]
    assert dict(item) == {"name": "pen"}
    with pytest.raises(KeyError):
        del item["price"]


def test_attribute_access_points_to_item_keys() -> None:
    item = Product(name="pen")
    with pytest.raises(AttributeError, match=r"item\['name'\]"):
        item.name  # noqa: B018
    with pytest.raises(AttributeError, match=r"item\['name'\] = 'x'"):
        item.name = "x"  # type: ignore[misc]
    with pytest.raises(AttributeError):
        item.nothing  # noqa: B018
    item._private = 1  # private attributes are plain attributes
    assert item._private == 1


def test_init_forms_repr_and_equality() -> None:
    a = Product(name="pen", price=1)
    assert Product({"name": "pen", "price": 1}) == a == Product(a)
    assert repr(a) == "{'name': 'pen', 'price': 1}"
    assert len(a) == 2 and list(a) == ["name", "price"] and list(a.keys()) == ["name", "price"]
    assert hash(a) != hash(Product(a))  # identity, as Scrapy's


def test_copy_and_deepcopy() -> None:
    item = Product(name="pen", tags=["a"])
    shallow, deep = item.copy(), item.deepcopy()
    assert type(shallow) is Product and shallow == item and shallow is not item
    item["tags"].append("b")
    assert shallow["tags"] == ["a", "b"] and deep["tags"] == ["a"]
    assert copy.deepcopy(item) == item
    assert pickle.loads(pickle.dumps(item)) == item


class Base(Item):
    name = Field()
    keys = Field()  # a field may shadow a Mapping method's name
    values = Field()


def test_fields_are_inherited_in_declaration_order() -> None:
    class Child(Base):
        extra = Field()
        keys = Field(serializer=str)

    assert list(Child.fields) == ["name", "keys", "values", "extra"]
    assert Child.fields["keys"] == {"serializer": str}
    child = Child(keys=3)
    assert list(child.keys()) == ["keys"] and list(child.values()) == [3]


def test_a_fields_dict_declares_fields_too() -> None:
    class Declared(Item):
        fields = {"new": Field(default="X")}

    assert dict(Declared(new="N")) == {"new": "N"}


def test_multiple_inheritance_follows_the_mro() -> None:
    class A(Item):
        fields = {"update": Field(default="A")}
        save = Field(default="A")
        load = Field(default="A")

    class B(A):
        pass

    class C(A):
        fields = {"update": Field(default="C")}
        save = Field(default="C")

    class D(B, C):
        fields = {"update": Field(default="D")}
        load = Field(default="D")

    assert D.fields == {
        "save": {"default": "C"},
        "load": {"default": "D"},
        "update": {"default": "D"},
    }

    class Plain:  # not an Item: its Fields are not fields
        not_allowed = Field()

    class E(Plain, B):
        pass

    with pytest.raises(KeyError):
        E(not_allowed=1)
    assert E(save=1)["save"] == 1


def test_super_works_in_item_methods() -> None:
    class WithInit(Item):
        name = Field()

        def __init__(self, *args: Any, **kwargs: Any) -> None:
            super().__init__(*args, **kwargs)

    assert WithInit(name="x")["name"] == "x"


def test_itemadapter_and_skitter_items_know_items() -> None:
    item = Product(name="pen", tags=[Product(name="inner")])
    assert is_item(item)
    assert item_to_dict(item) == {"name": "pen", "tags": [{"name": "inner"}]}
    adapter = ItemAdapter(item)
    assert list(adapter.field_names()) == ["name", "price", "tags"]
    assert adapter.get_field_meta("name") == {"serializer": str}
    assert ItemAdapter.is_item_class(Product)
    assert skitter.Item is Item and skitter.Field is Field


async def test_items_flow_through_pipelines_and_feeds(tmp_path: Path) -> None:
    site = Site({"/": "<h1>pen</h1><b>3</b>"})
    base = site.base

    class Shop(skitter.Spider):
        name = "items"
        start_urls = [base + "/"]

        def parse(self, response: Response) -> Any:
            yield Product(
                name=response.css("h1::text").get(), price=int(response.css("b::text").get())
            )

    out, table = tmp_path / "out.jsonl", tmp_path / "out.csv"
    items, stats = await crawl_items(
        Shop, {**site.settings, "FEEDS": {str(out): {}, str(table): {"format": "csv"}}}
    )
    assert [type(i) for i in items] == [Product]
    assert stats["item_scraped_count"] == 1
    assert orjson.loads(out.read_bytes()) == {"name": "pen", "price": 3}
    with table.open() as f:
        rows = list(csv.DictReader(f))
    assert rows == [{"name": "pen", "price": "3", "tags": ""}]  # every declared column
