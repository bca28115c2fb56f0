"""Scrapy's ``scrapy.utils.signal``: ``disconnect_all``.

Scrapy's signals go through one process-wide dispatcher; skitter's belong to each
crawler (``crawler.signals``), so there is nothing process-wide to disconnect: with a
``sender`` that has signals (a crawler), its receivers of ``signal`` are disconnected.
"""

from __future__ import annotations

from collections.abc import Hashable
from typing import Any

__all__ = ["disconnect_all"]


def disconnect_all(signal: Hashable, sender: Any = None) -> None:
    """Disconnect every receiver of ``signal`` on ``sender``'s signal manager (a crawler
    or the manager itself); without a sender there is no shared one to clear."""
    manager = getattr(sender, "signals", sender)
    disconnect = getattr(manager, "disconnect_all", None)
    if callable(disconnect):
        disconnect(signal)
