"""Scrapy's declared items: ``Item`` and ``Field``, at Scrapy's import path.

A spider ported from Scrapy declares its items as classes with ``Field()`` attributes;
they must behave as Scrapy's do (a typo in a key is an error, not a new column) and
flow through skitter's pipelines and exporters as any other item. The second half is
an ``itemadapter`` adapter, registered when this module is imported: itemadapter only
knows Scrapy's own Item class, and every item path in skitter (``skitter.items``,
``itemloaders``'s field processors) asks itemadapter. An Item instance cannot exist
before this module is imported, so no class is classified before the adapter is there.
"""

from __future__ import annotations

import copy as _copy
from abc import ABCMeta
from collections import deque
from collections.abc import Iterator, KeysView, MutableMapping
from pprint import pformat
from types import MappingProxyType
from typing import Any, ClassVar

from itemadapter import ItemAdapter
from itemadapter.adapter import AdapterInterface

__all__ = ["Field", "Item", "ItemMeta"]


class Field(dict[str, Any]):
    """A declared field; its contents are free metadata (serializer, input_processor,
    output_processor...) that pipelines, exporters and loaders read."""


class ItemMeta(ABCMeta):
    """Builds ``fields``: the Fields a class declares (as attributes, or in a ``fields``
    dict of its own) merged with those of its Item bases, along the MRO as attributes
    are (a nearer class's Field wins; a field keeps the place of its first
    declaration). The Field attributes are taken off the class, so ``item.name`` is
    not mistaken for the field's value; Fields of bases that are not Items are not
    fields, as in Scrapy."""

    def __new__(mcs, name: str, bases: tuple[type, ...], attrs: dict[str, Any]) -> ItemMeta:
        own: dict[str, Field] = {}
        given = attrs.get("fields")
        if isinstance(given, dict):
            own.update(given)
        own.update((key, value) for key, value in attrs.items() if isinstance(value, Field))
        kept = {
            key: value
            for key, value in attrs.items()
            if key != "fields" and not isinstance(value, Field)
        }
        kept["_own_fields"] = own
        cls = super().__new__(mcs, name, bases, kept)
        fields: dict[str, Field] = {}
        for klass in reversed(cls.__mro__):
            if isinstance(klass, ItemMeta):
                fields.update(klass.__dict__["_own_fields"])
        cls.fields = fields  # type: ignore[attr-defined]
        return cls


class Item(MutableMapping[str, Any], metaclass=ItemMeta):
    """A dict-like record whose keys are limited to the declared fields.

    Values are read and written as ``item["name"]``; attribute access is refused with a
    message saying so, as in Scrapy. Equality, iteration and ``len`` are those of the
    values set so far; the hash is the object's identity, as Scrapy's.
    """

    fields: ClassVar[dict[str, Field]]

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        self._values: dict[str, Any] = {}
        if args or kwargs:
            for key, value in dict(*args, **kwargs).items():
                self[key] = value

    def __getitem__(self, key: str) -> Any:
        return self._values[key]

    def __setitem__(self, key: str, value: Any) -> None:
        if key not in self.fields:
            raise KeyError(f"{type(self).__name__} does not support field: {key}")
        self._values[key] = value

    def __delitem__(self, key: str) -> None:
        del self._values[key]

    def __getattr__(self, name: str) -> Any:
        if name in self.fields:
            raise AttributeError(f"Use item[{name!r}] to get field value")
        raise AttributeError(name)

    def __setattr__(self, name: str, value: Any) -> None:
        if not name.startswith("_"):
            raise AttributeError(f"Use item[{name!r}] = {value!r} to set field value")
        super().__setattr__(name, value)

    def __len__(self) -> int:
        return len(self._values)

    def __iter__(self) -> Iterator[str]:
        return iter(self._values)

    __hash__ = object.__hash__

    def keys(self) -> KeysView[str]:
        return self._values.keys()

    def __repr__(self) -> str:
        return pformat(dict(self))

    def copy(self) -> Item:
        """A shallow copy: a new item of the same class holding the same values."""
        return type(self)(self)

    def deepcopy(self) -> Item:
        return _copy.deepcopy(self)


class ItemAdapterForItem(AdapterInterface):
    """Lets itemadapter (and so skitter's pipelines, exporters and ``itemloaders``) read
    an ``Item``: its field names are the declared ones, its field metadata the Field."""

    @classmethod
    def is_item(cls, item: Any) -> bool:
        return isinstance(item, Item)

    @classmethod
    def is_item_class(cls, item_class: type) -> bool:
        return isinstance(item_class, type) and issubclass(item_class, Item)

    @classmethod
    def get_field_meta_from_class(
        cls, item_class: type, field_name: str
    ) -> MappingProxyType[str, Any]:
        return MappingProxyType(item_class.fields[field_name])  # type: ignore[attr-defined]

    @classmethod
    def get_field_names_from_class(cls, item_class: type) -> list[str] | None:
        return list(item_class.fields)  # type: ignore[attr-defined]

    def field_names(self) -> KeysView[str]:
        return KeysView(self.item.fields)

    def __getitem__(self, field_name: str) -> Any:
        return self.item[field_name]

    def __setitem__(self, field_name: str, value: Any) -> None:
        self.item[field_name] = value

    def __delitem__(self, field_name: str) -> None:
        del self.item[field_name]

    def __iter__(self) -> Iterator[str]:
        return iter(self.item)

    def __len__(self) -> int:
        return len(self.item)


def _register() -> None:
    classes = ItemAdapter.ADAPTER_CLASSES
    if ItemAdapterForItem in classes:
        return
    # First, where itemadapter puts Scrapy's own Item.
    if isinstance(classes, deque):
        classes.appendleft(ItemAdapterForItem)
    else:
        ItemAdapter.ADAPTER_CLASSES = (ItemAdapterForItem, *classes)


_register()
