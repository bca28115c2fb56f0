"""Items: the data objects callbacks yield, whatever class they are written with.

An item is a dict, a dataclass instance, an attrs instance or a pydantic model instance
(anything ``itemadapter`` knows). Both functions here run for every object a callback
yields, so they avoid ``itemadapter``'s generic path when they can:

- ``is_item`` answers for a dict at once and remembers the answer per class for the rest:
  whether instances of a class are items is a property of the class, and asking
  ``itemadapter`` walks five adapters per call.
- ``item_to_dict`` copies containers only when they hold something that is not plain
  JSON-like data, so a flat dict of strings costs one dict copy.

Classes are remembered at their first sight; an adapter added to
``ItemAdapter.ADAPTER_CLASSES`` later is not seen for classes already classified.

``itemadapter`` itself is imported at the first object that is not a dict nor a plain
value: it imports Scrapy, pydantic and attrs whenever they are installed (0.4 s and
25 MB where Scrapy is), which a crawl that yields dicts never needs.
"""

from __future__ import annotations

from collections.abc import Callable
from types import AsyncGeneratorType, CoroutineType, GeneratorType
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from itemadapter import ItemAdapter

__all__ = ["adapter_class", "exported_dict", "field_names", "is_item", "item_to_dict"]

_SCALARS: frozenset[type] = frozenset({str, int, float, bool, type(None), bytes})
# Known without asking itemadapter: dicts are items; plain values, containers and what
# callbacks return (generators, coroutines) are not.
_item_classes: dict[type, bool] = {dict: True} | dict.fromkeys(
    (*_SCALARS, list, tuple, set, frozenset, GeneratorType, AsyncGeneratorType, CoroutineType),
    False,
)
#: Per item class, the ``serializer`` of each field that declares one (Scrapy's
#: ``Field(serializer=...)``), found once per class: field metadata is the class's.
_serializers: dict[type, dict[str, Callable[[Any], Any]]] = {dict: {}}


def is_item(obj: Any) -> bool:
    """True for a dict, dataclass, attrs or pydantic instance; False for classes and the
    rest (requests, strings, lists...)."""
    cls = obj.__class__
    known = _item_classes.get(cls)
    if known is None:
        known = _item_classes[cls] = adapter_class().is_item(obj)
    return known


def item_to_dict(item: Any) -> dict[str, Any]:
    """A plain dict of ``item``'s fields, with nested items turned into dicts too.

    Lists, tuples and sets keep their type; their contents are converted. Raises
    TypeError for an object that is not an item.
    """
    if item.__class__ is dict:
        return {key: _plain(value) for key, value in item.items()}
    if not is_item(item):
        raise TypeError(f"not an item: {type(item).__name__} {item!r:.80}")
    return {key: _plain(value) for key, value in adapter_class()(item).items()}


def exported_dict(item: Any) -> dict[str, Any]:
    """``item_to_dict`` for a feed: a field declared with a ``serializer`` (Scrapy's
    ``Field(serializer=str)``) is written as that serializer returns it, as Scrapy's
    exporters do; the item itself is left as the pipelines saw it."""
    data = item_to_dict(item)
    serializers = _serializers_of(item.__class__)
    for name, serialize in serializers.items():
        if name in data:
            data[name] = _plain(serialize(data[name]))
    return data


def _serializers_of(cls: type) -> dict[str, Callable[[Any], Any]]:
    found = _serializers.get(cls)
    if found is None:
        found = {}
        adapter = adapter_class()
        for name in adapter.get_field_names_from_class(cls) or ():
            serializer = adapter.get_field_meta_from_class(cls, name).get("serializer")
            if callable(serializer):
                found[name] = serializer
        _serializers[cls] = found
    return found


def field_names(item: Any) -> list[str]:
    """The fields an item has or declares: a dict's keys; for a class that declares its
    fields (Scrapy's Item, a dataclass...), all of them, set or not, as Scrapy's CSV
    exporter takes them for its columns."""
    if item.__class__ is dict:
        return list(item)
    return [str(name) for name in adapter_class()(item).field_names()]


def adapter_class() -> type[ItemAdapter]:
    """itemadapter's ``ItemAdapter``, imported on first use (see the module docstring)."""
    from itemadapter import ItemAdapter

    return ItemAdapter


def _plain(value: Any) -> Any:
    cls = value.__class__
    if cls in _SCALARS:
        return value
    if cls is list or cls is tuple or cls is set or cls is frozenset:
        return cls(_plain(v) for v in value)
    if isinstance(value, dict):
        return {key: _plain(v) for key, v in value.items()}
    if is_item(value):
        return item_to_dict(value)
    return value
