"""A push that returns only once a replica holds it, for a master behind Sentinel.

Redis replicates asynchronously. During a failover the old master goes on accepting
writes between the promotion of its replica and its own demotion, and those writes
vanish. A worker's pushes and its ack can land on different masters then (its pooled
connections do not all move at once): the ack of a page on the new master, the links
its callback pushed on the old one. The page is done, its links are gone.

So behind Sentinel each push is followed, in the same pipeline on the same connection,
by ``WAIT replicas timeout``: Redis answers how many replicas hold every write of that
connection so far. Fewer than asked (an old master whose replica was just promoted has
none) fails the push as "unavailable for now" (``NOREPLICAS``): the worker pauses and
pushes again, and the page is acked only after its links were pushed for good. Sending
both in one pipeline matters: a ``WAIT`` retried alone on a new connection would count
no writes at all and answer at once. Pushing twice is harmless (a push merges into
itself). Only the replicas the sentinel knows as up are waited for (``_AliveReplicas``).
A plain Redis or a Cluster sends the script alone: no extra command at all.
"""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable, Sequence
from typing import TYPE_CHECKING, Any

from redis.exceptions import ConnectionError, NoScriptError, ResponseError, TimeoutError

if TYPE_CHECKING:
    from redis.asyncio import Redis
    from redis.commands.core import AsyncScript

__all__ = ["ReplicaWait", "replicated"]

#: Sends one push: the script's keys and args, its reply.
PushCall = Callable[[Sequence[Any], Sequence[Any]], Awaitable[Any]]


class ReplicaWait:
    """How many replicas a push must reach (``replicas``), waiting at most
    ``timeout`` seconds for them."""

    def __init__(self, replicas: int, timeout: float) -> None:
        if isinstance(replicas, bool) or not isinstance(replicas, int) or replicas < 0:
            raise ValueError(f"replicas to wait for must be an integer >= 0, got {replicas!r}")
        if not timeout > 0:
            raise ValueError(f"the wait for replicas must be > 0 seconds, got {timeout!r}")
        self.replicas = replicas
        self.timeout_ms = max(1, round(timeout * 1000))

    def __repr__(self) -> str:
        return f"ReplicaWait({self.replicas}, {self.timeout_ms / 1000})"


def replicated(client: Redis, script: AsyncScript, wait: ReplicaWait | None) -> PushCall:
    """The call that runs ``script`` on ``client``: alone without ``wait`` (or with 0
    replicas), else followed by ``WAIT`` on the same connection (see the module)."""
    if wait is None or wait.replicas == 0:

        async def alone(keys: Sequence[Any], args: Sequence[Any]) -> Any:
            return await script(keys, args)

        return alone

    alive = _AliveReplicas(client, wait.replicas)

    async def waited(keys: Sequence[Any], args: Sequence[Any]) -> Any:
        needed = min(wait.replicas, await alive.count())
        if needed == 0:  # the sentinel knows no replica up: none to wait for
            return await script(keys, args)
        try:
            answer, reached = await _push_and_wait(client, script, needed, wait, keys, args)
        except NoScriptError:  # a new or restarted master: load it, once
            await client.script_load(script.script)
            answer, reached = await _push_and_wait(client, script, needed, wait, keys, args)
        if reached < needed and reached < min(wait.replicas, await alive.count(fresh=True)):
            raise ResponseError(
                f"NOREPLICAS a push reached {reached} of the {needed} replicas asked for "
                f"within {wait.timeout_ms} ms (REDIS_SENTINEL_WAIT_REPLICAS)"
            )
        return answer

    return waited


async def _push_and_wait(
    client: Redis,
    script: AsyncScript,
    needed: int,
    wait: ReplicaWait,
    keys: Sequence[Any],
    args: Sequence[Any],
) -> tuple[Any, int]:
    """The script's reply, and how many replicas hold this connection's writes."""
    pipe = client.pipeline(transaction=False)
    pipe.evalsha(script.sha, len(keys), *keys, *args)
    pipe.execute_command("WAIT", needed, wait.timeout_ms)
    answer, reached = await pipe.execute(raise_on_error=False)
    if isinstance(answer, Exception):
        raise answer
    if isinstance(reached, Exception):
        raise reached
    return answer, int(reached)


class _AliveReplicas:
    """How many replicas of the master the sentinel knows as up (not SDOWN/ODOWN),
    asked again at most every ``REFRESH`` seconds, or at once when a WAIT fell short.

    A master whose only replica died (or a promoted one whose old master was killed
    and is still listed as its replica) cannot have its pushes replicated: once the
    sentinel marks that replica down, pushes go on unreplicated, so a crawl with one
    surviving node goes on. During a failover the old master and the promoted replica
    are both listed up, so no push is let through on an old master that lost its
    replica to the promotion."""

    REFRESH = 1.0

    def __init__(self, client: Redis, asked: int) -> None:
        self._pool = client.connection_pool
        self._known = asked  # until a sentinel says otherwise
        self._at: float | None = None

    async def count(self, *, fresh: bool = False) -> int:
        now = asyncio.get_running_loop().time()
        if fresh or self._at is None or now - self._at >= self.REFRESH:
            self._at = now
            self._known = await self._ask(self._known)
        return self._known

    async def _ask(self, known: int) -> int:
        manager = getattr(self._pool, "sentinel_manager", None)
        service = getattr(self._pool, "service_name", None)
        if manager is None or service is None:
            return known
        for sentinel in manager.sentinels:
            try:
                replicas = await sentinel.sentinel_slaves(service)
            except (ConnectionError, ResponseError, TimeoutError):
                continue
            return len(manager.filter_slaves(replicas))
        return known  # no sentinel answered: as last known
