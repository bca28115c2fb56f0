"""The one loader of skitter's Lua scripts: the frontier's and the cluster's.

Scripts live as package data, ``lua/<name>.lua`` next to the code that calls them: the
frontier's in ``skitter.frontier._redis``, the cluster's (politeness, start claim,
heartbeats) in ``skitter.cluster``. The shared definitions a script may be preceded by
(``_clock.lua``: the time a script decides at; ``_bucket.lua``: a token bucket brought
up to that time; ``_bloom.lua``) live here, in ``skitter.redis``, whatever package the
script is in: one clock rule, one refill rule for every script. A package's own
preludes (the frontier's ``_common.lua``, on its eleven keys) stay with its scripts.

Unlike the frontier's scripts (``_scripts.py``), the standalone ones get no
``_common.lua`` prelude: they do not work on the frontier's eleven keys, and each is
short enough to read on its own (the politeness scripts get Redis's clock from
``_clock.lua``, the Bloom filter's the bit positions of ``_bloom.lua``). Each is one
EVALSHA per call; ``redis-py``'s ``AsyncScript`` loads it again after a NOSCRIPT (Redis
restarted, or SCRIPT FLUSH), once per server.
"""

from __future__ import annotations

from functools import cache
from importlib.resources import files
from typing import TYPE_CHECKING, Literal

if TYPE_CHECKING:
    from redis.asyncio import Redis
    from redis.commands.core import AsyncScript

__all__ = [
    "HOME",
    "TimeSource",
    "check_time_source",
    "lua_file",
    "lua_number",
    "register",
    "script_text",
]

#: Whose clock a script decides by (``_clock.lua``): Redis's own TIME, the same for
#: every worker, or the caller's ``now`` (tests that drive time with plain numbers).
TimeSource = Literal["redis", "caller"]


def check_time_source(value: str) -> TimeSource:
    if value not in ("redis", "caller"):
        raise ValueError(f"time_source must be 'redis' or 'caller', got {value!r}")
    return value  # type: ignore[return-value]


#: Where the shared definitions are.
HOME = "skitter.redis"


@cache
def lua_file(name: str, package: str = HOME) -> str:
    """The text of ``lua/<name>.lua`` in ``package``."""
    return files(package).joinpath("lua", f"{name}.lua").read_text("utf-8")


@cache
def script_text(
    name: str, preludes: tuple[str, ...], package: str, own: tuple[str, ...] = ()
) -> str:
    """Script ``name`` of ``package`` preceded by the shared definitions it uses
    (``_clock``, ``_bucket``, ``_bloom``), then by its package's ``own`` preludes: one
    self-contained text, so each call stays one EVALSHA."""
    parts = [lua_file(prelude) for prelude in preludes]
    parts.extend(lua_file(prelude, package) for prelude in own)
    parts.append(f"-- ==== {name}.lua ====\n{lua_file(name, package)}")
    return "\n".join(parts)


def register(client: Redis, name: str, *preludes: str, package: str) -> AsyncScript:
    """Script ``lua/<name>.lua`` of ``package`` after ``preludes``, bound to ``client``."""
    return client.register_script(script_text(name, preludes, package))


def lua_number(x: float) -> str:
    """A number as the scripts read it back exactly (``repr`` of a float round-trips,
    and Lua's ``tonumber`` parses it with ``strtod``)."""
    return repr(float(x))
