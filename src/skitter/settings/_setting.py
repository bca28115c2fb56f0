"""``Setting``: one known name, its default, the type strings are parsed as, its doc."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

__all__ = ["KiB", "MiB", "Setting"]

KiB = 1024
MiB = 1024 * KiB


@dataclass(frozen=True, slots=True)
class Setting:
    """A known setting: its default, the type strings are parsed as, and what it does."""

    name: str
    default: Any
    kind: type
    doc: str
