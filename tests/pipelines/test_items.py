"""is_item and item_to_dict over the four item kinds, nested."""

from __future__ import annotations

import dataclasses
from collections import OrderedDict

import attrs
import pydantic
import pytest

from skitter.http import Request
from skitter.items import is_item, item_to_dict


@dataclasses.dataclass
class Part:
    sku: str


@attrs.define
class Maker:
    name: str
    parts: list[Part]


class Product(pydantic.BaseModel):
    model_config = pydantic.ConfigDict(arbitrary_types_allowed=True)

    title: str
    maker: Maker
    tags: tuple[str, ...] = ()


@pytest.mark.parametrize(
    "obj",
    [{}, OrderedDict(a=1), Part("x"), Maker("m", []), Product(title="t", maker=Maker("m", []))],
)
def test_items_are_items(obj: object) -> None:
    assert is_item(obj)
    assert is_item(obj)  # the cached answer agrees


@pytest.mark.parametrize(
    "obj", [Part, Maker, Product, Request("http://127.0.0.1/"), "text", [{}], None, 3, b"x"]
)
def test_others_are_not(obj: object) -> None:
    assert not is_item(obj)


def test_item_to_dict_converts_nested_items_of_every_kind() -> None:
    product = Product(title="t", maker=Maker("m", [Part("a"), Part("b")]), tags=("x",))
    assert item_to_dict(product) == {
        "title": "t",
        "maker": {"name": "m", "parts": [{"sku": "a"}, {"sku": "b"}]},
        "tags": ("x",),
    }
    source = {"product": product, "plain": {"k": [Part("c")]}, "n": 1}
    converted = item_to_dict(source)
    assert converted["product"]["maker"]["parts"][0] == {"sku": "a"}
    assert converted["plain"] == {"k": [{"sku": "c"}]}
    assert converted is not source
    assert source["plain"]["k"][0] == Part("c")  # the original is left alone


def test_item_to_dict_refuses_non_items() -> None:
    with pytest.raises(TypeError, match="not an item: list"):
        item_to_dict([1, 2])


def test_a_feed_writes_what_a_fields_serializer_returns_as_scrapy_does() -> None:
    from skitter.item import Field, Item
    from skitter.items import exported_dict

    class Quote(Item):
        text = Field()
        tags = Field(serializer=",".join)
        year = Field(serializer=str)

    quote = Quote(text="hope", tags=["a", "b"])
    assert exported_dict(quote) == {"text": "hope", "tags": "a,b"}  # only the fields set
    assert quote["tags"] == ["a", "b"]  # the item itself is not changed

    @dataclasses.dataclass
    class Plain:
        n: int = dataclasses.field(default=1, metadata={"serializer": lambda n: n * 10})

    assert exported_dict(Plain()) == {"n": 10}  # dataclass field metadata, via itemadapter
    assert exported_dict({"tags": ["a"]}) == {"tags": ["a"]}  # a dict declares nothing
