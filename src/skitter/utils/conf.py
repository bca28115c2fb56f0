"""Scrapy's ``scrapy.utils.conf`` helpers that code written for Scrapy imports:
``build_component_list`` (a ``{component: order}`` dict as an ordered list) and
``feed_complete_default_values_from_settings`` (a FEEDS entry with the FEED_* defaults).

skitter builds its own component lists in ``skitter._components`` (which also loads and
builds them); these are the plain functions, for a project's own managers and tests.
"""

from __future__ import annotations

import numbers
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from collections.abc import Callable, Mapping

__all__ = ["build_component_list", "feed_complete_default_values_from_settings"]


def _same(component: Any) -> Any:
    return component


def build_component_list(
    compdict: Mapping[Any, Any], *, convert: Callable[[Any], Any] = _same
) -> list[Any]:
    """The components of ``compdict`` (``{component: order}``, each key passed through
    ``convert``) lowest order first, those whose order is None left out. An order that
    is not a number, or two keys that convert to one, is a ValueError: either would
    make the order a guess."""
    converted: dict[Any, Any] = {}
    for component, order in compdict.items():
        if order is not None and (isinstance(order, bool) or not isinstance(order, numbers.Real)):
            raise ValueError(
                f"Invalid value {order!r} for component {component!r}: give a number, or "
                "None to switch it off"
            )
        key = convert(component)
        if key in converted:
            raise ValueError(
                f"Some paths in {list(compdict)!r} convert to the same object, {key!r}: "
                "give each component once"
            )
        converted[key] = order
    kept = [(key, order) for key, order in converted.items() if order is not None]
    return [key for key, _order in sorted(kept, key=lambda pair: pair[1])]


def feed_complete_default_values_from_settings(
    feed: Mapping[str, Any], settings: Any
) -> dict[str, Any]:
    """A FEEDS entry's options with the FEED_* settings' defaults for what it leaves out
    (``batch_item_count``, ``encoding``, ``fields``, ``store_empty``, ``uri_params``,
    ``indent``, and ``item_export_kwargs`` empty)."""
    get = settings.get
    out = dict(feed)
    out.setdefault("batch_item_count", int(get("FEED_EXPORT_BATCH_ITEM_COUNT") or 0))
    out.setdefault("encoding", get("FEED_EXPORT_ENCODING"))
    out.setdefault("fields", get("FEED_EXPORT_FIELDS") or None)
    out.setdefault("store_empty", bool(get("FEED_STORE_EMPTY", True)))
    out.setdefault("uri_params", get("FEED_URI_PARAMS"))
    out.setdefault("item_export_kwargs", {})
    indent = get("FEED_EXPORT_INDENT")
    out.setdefault("indent", None if indent is None else int(indent))
    return out
