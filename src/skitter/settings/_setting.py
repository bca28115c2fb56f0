"""``Setting``: one known name, its default, the type strings are parsed as, its doc."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

__all__ = ["KiB", "MiB", "Setting"]

KiB = 1024
MiB = 1024 * KiB


@dataclass(frozen=True, slots=True)
class Setting:
    """A known setting: its default, the type strings are parsed as, and what it does.

    ``scrapy`` names the setting of the same meaning in Scrapy or a Scrapy add-on when
    its name is not this one (``"SCHEDULER_PERSIST (scrapy-redis)"``), for the settings
    reference; a setting that keeps Scrapy's name needs none (see
    ``_registry.scrapy_equivalent``)."""

    name: str
    default: Any
    kind: type
    doc: str
    scrapy: str = ""
