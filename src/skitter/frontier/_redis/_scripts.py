"""The Lua scripts of the Redis frontier, loaded from package data and bound to a client.

Each multi-key change is one script (``lua/<name>.lua``, with a KEYS/ARGV header), so
two workers never see a half-done change and a worker killed between two commands
loses nothing. ``skitter.redis``'s ``_clock.lua`` and ``_bloom.lua``, then ``lua/_common.lua``, are
prepended to each: their helpers are shared without a server-side library, and each
script stays one self-contained EVALSHA.

Scripts are registered once per client. ``redis-py``'s ``AsyncScript`` sends EVALSHA and,
on NOSCRIPT (Redis restarted, or SCRIPT FLUSH), loads the script and sends it again, so
a restarted server costs one extra round trip per script, once.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING

from skitter.redis import script_text

if TYPE_CHECKING:
    from redis.asyncio import Redis
    from redis.commands.core import AsyncScript

__all__ = ["SCRIPT_NAMES", "Scripts", "script_source"]

#: The package whose ``lua/`` holds the frontier's scripts.
HERE = "skitter.frontier._redis"

SCRIPT_NAMES = (
    "open",
    "push",
    "lease",
    "ack",
    "nack",
    "mark_bad",
    "renew",
    "reclaim",
    "counts",
    "requeue",
)


def script_source(name: str) -> str:
    """The full text of script ``name``: the shared definitions, then the script."""
    return script_text(name, ("_clock", "_bloom"), HERE, own=("_common",))


@dataclass(frozen=True, slots=True)
class Scripts:
    """One ``AsyncScript`` per change, registered on one client."""

    open: AsyncScript
    push: AsyncScript
    lease: AsyncScript
    ack: AsyncScript
    nack: AsyncScript
    mark_bad: AsyncScript
    renew: AsyncScript
    reclaim: AsyncScript
    counts: AsyncScript
    requeue: AsyncScript

    @classmethod
    def register(cls, client: Redis) -> Scripts:
        return cls(*(client.register_script(script_source(name)) for name in SCRIPT_NAMES))
