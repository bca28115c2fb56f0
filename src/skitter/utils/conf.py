"""Scrapy's ``scrapy.utils.conf``: ``build_component_list``, which plug-ins use to order
a components dict of their own (scrapy-poet's ``SCRAPY_POET_PROVIDERS``).

skitter orders its own components settings with ``_components.merge_components``, which
also loads them; this is the plain ordering, without loading, as Scrapy documents it.
"""

from __future__ import annotations

from collections.abc import Mapping
from numbers import Real
from typing import Any

__all__ = ["build_component_list"]


def build_component_list(compdict: Mapping[Any, Any]) -> list[Any]:
    """The keys of ``compdict`` ordered by their values, lowest first, leaving out those
    set to None (switched off). A value that is neither a number nor None is refused:
    an order given as a string would sort wrongly without a word."""
    if not isinstance(compdict, Mapping):
        raise TypeError(f"a components dict is needed, got {type(compdict).__name__}")
    for key, value in compdict.items():
        if value is not None and (not isinstance(value, Real) or isinstance(value, bool)):
            raise ValueError(
                f"Invalid value {value!r} for component {key!r}, "
                "please provide a real number or None instead"
            )
    ordered = sorted(
        ((key, value) for key, value in compdict.items() if value is not None),
        key=lambda pair: pair[1],
    )
    return [key for key, _value in ordered]
