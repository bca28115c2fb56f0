"""Scrapy's ``scrapy.settings.default_settings``: every known setting's default, as a
module attribute (``default_settings.CONCURRENT_REQUESTS``).

Made from the registry, so it cannot drift from what a crawl actually uses. Scrapy's
settings that skitter refuses are not here: their defaults mean nothing to skitter.
"""

from __future__ import annotations

from typing import Any

from skitter.settings._registry import SETTINGS
from skitter.settings._settings import _BASE_TABLES

#: The ``*_BASE`` settings whose default (None) stands for the built-ins' table.
_LATE = frozenset(
    name for name, setting in SETTINGS.items() if name.endswith("_BASE") and setting.default is None
)


def _defaults() -> dict[str, Any]:
    """Every default but the ``*_BASE`` tables of built-ins: ``__getattr__`` reads those
    when asked (their packages register them on import, perhaps after this one)."""
    return {name: setting.default for name, setting in SETTINGS.items() if name not in _LATE}


def __getattr__(name: str) -> Any:
    """A ``*_BASE`` setting whose default is "the built-ins" (None): their table, as the
    package that owns them registered it (Scrapy code iterates it)."""
    if name not in _LATE:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    table = _BASE_TABLES.get(name)
    return None if table is None else dict(table)


globals().update(_defaults())
__all__ = sorted(SETTINGS)
