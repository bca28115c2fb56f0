"""Counting and logging what the scripts moved aside.

Anyone who can write to the Redis can put bytes in the queue; the scripts move what
cannot be used to the ``bad`` hash. Here each such entry is counted
(``frontier/quarantined``) and each kind of reason logged once: a hostile writer must
not flood the log, and the bad hash keeps the details (of the newest ``bad_max``).
"""

from __future__ import annotations

import logging
from collections.abc import Sequence
from typing import TYPE_CHECKING

from skitter.redis import reason_kind

if TYPE_CHECKING:
    from skitter._types import StatsSink

__all__ = ["Quarantine"]

logger = logging.getLogger("skitter.frontier.redis")


class Quarantine:
    def __init__(self, owner: object) -> None:
        self._owner = owner
        #: Counts what is moved aside; workers set it.
        self.stats: StatsSink | None = None
        self._warned: set[str] = set()

    def __call__(self, aside: Sequence[bytes], reason: str | None = None) -> None:
        """Note what a script moved aside: flat field, reason pairs, or one field with
        ``reason``."""
        if reason is not None:
            pairs: list[tuple[bytes, bytes | str]] = [(aside[0], reason)]
        else:
            pairs = list(zip(aside[::2], aside[1::2], strict=True))
        for field, why in pairs:
            text = why if isinstance(why, str) else why.decode("utf-8", "replace")
            if self.stats is not None:
                self.stats.inc("frontier/quarantined")
            kind = reason_kind(text)
            if kind in self._warned:
                logger.debug("%r: moved %r aside: %s", self._owner, field, text)
                continue
            self._warned.add(kind)
            logger.warning(
                "%r: moved %r aside, never run: %s (logged once per reason; the job's bad "
                "hash keeps the latest)",
                self._owner,
                field,
                text,
            )
