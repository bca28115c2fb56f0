"""Standalone Lua scripts: the cluster-wide politeness and the Bloom filter.

Unlike the frontier's scripts (``_scripts.py``), these get no ``_common.lua`` prelude:
they do not work on the frontier's ten keys, and each is short enough to read on its
own. Like those, each is one EVALSHA per call; ``redis-py``'s ``AsyncScript`` loads it
again after a NOSCRIPT (Redis restarted, or SCRIPT FLUSH), once per server.
"""

from __future__ import annotations

from functools import cache
from importlib.resources import files
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from redis.asyncio import Redis
    from redis.commands.core import AsyncScript

__all__ = ["lua_number", "register"]


@cache
def _source(name: str) -> str:
    lua = files("skitter.frontier._redis").joinpath("lua")
    return lua.joinpath(f"{name}.lua").read_text(encoding="utf-8")


def register(client: Redis, name: str) -> AsyncScript:
    """Script ``lua/<name>.lua``, bound to ``client``."""
    return client.register_script(_source(name))


def lua_number(x: float) -> str:
    """A number as the scripts read it back exactly (``repr`` of a float round-trips,
    and Lua's ``tonumber`` parses it with ``strtod``)."""
    return repr(float(x))
