"""What makes an item the same item when it is written again: its identity.

A sink writes each item under an identity, and a second write of the same identity
replaces the first (an upsert; JetStream drops it as a duplicate). That is what makes a
task that runs again (its worker killed after the commit, before the ack) harmless.

The identity is, in order of precedence:

1. the fields named by the sink's ``key`` option;
2. the fields the item's class declares as its key: ``key=True`` in a field's metadata
   (``scrapy.Field(key=True)``, ``dataclasses.field(metadata={"key": True})``,
   ``attrs.field(metadata={"key": True})``, pydantic's
   ``Field(json_schema_extra={"key": True})``);
3. otherwise, where the item came from: the spider, the taskid of the task whose
   callback yielded it and its place in that callback's output (``tree/<taskid>/3``),
   or the start request position for an item ``start()`` yielded. A task that runs
   again yields the same items in the same places, so they get the same identities;
   an item without such an origin (a periodic callback's) gets a random one.
"""

from __future__ import annotations

import hashlib
import uuid
from collections.abc import Mapping
from typing import Any

import orjson

from skitter.exceptions import StorageError
from skitter.items import adapter_class

__all__ = ["declared_key", "identity_text", "key_values"]

#: Identities longer than this are hashed, so that they fit a VARCHAR key column.
_LONGEST = 255
_declared: dict[type, tuple[str, ...]] = {dict: ()}


def declared_key(cls: type) -> tuple[str, ...]:
    """The fields ``cls`` declares as its key (found once per class)."""
    found = _declared.get(cls)
    if found is None:
        adapter = adapter_class()
        names = adapter.get_field_names_from_class(cls) or ()
        found = tuple(
            str(name) for name in names if _is_key(adapter.get_field_meta_from_class(cls, name))
        )
        _declared[cls] = found
    return found


def _is_key(meta: Mapping[str, Any]) -> bool:
    if meta.get("key") is True:
        return True
    extra = meta.get("json_schema_extra")  # pydantic
    return isinstance(extra, Mapping) and extra.get("key") is True


def key_values(data: Mapping[str, Any], key: tuple[str, ...], where: str) -> tuple[Any, ...]:
    """The values of ``key``'s fields in ``data``; StorageError if one is missing or None
    (such an item cannot be written exactly once: it has no identity)."""
    values = []
    for name in key:
        value = data.get(name)
        if value is None:
            raise StorageError(
                f"{where}: an item has no value for its key field {name!r}, so it cannot be "
                "written exactly once; set it, or drop such items in a pipeline"
            )
        values.append(value)
    return tuple(values)


def identity_text(values: tuple[Any, ...] | None, origin: str | None) -> str:
    """One string for an identity (a message id, the id column): the key's value, the
    key's values as JSON when there are several, else the origin, else a random one."""
    if values is not None:
        text = str(values[0]) if len(values) == 1 else orjson.dumps(values, default=str).decode()
    else:
        text = origin if origin is not None else f"once/{uuid.uuid4().hex}"
    if len(text) > _LONGEST:
        digest = hashlib.sha256(text.encode(), usedforsecurity=False).hexdigest()
        text = f"{text[: _LONGEST - 66]}~{digest}"
    return text
