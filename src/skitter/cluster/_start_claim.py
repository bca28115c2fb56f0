"""Start requests are produced by one worker of a job at a time: the first to claim them.

The claim is a lease (renewed while that worker feeds, and while it waits for the queue
to drain), fenced by a token: only its holder can record progress or renew it, so a
feeder whose claim lapsed (a long pause) can neither move the offset back nor keep
another worker's claim alive; it stops and waits for a turn again. The number of start
requests queued so far is recorded in Redis after each one, so when the claimer dies
another worker takes the claim over and continues at that position; start requests
re-queued around a crash carry taskids from their position and merge with themselves,
so none runs twice. Every claim script (``lua/start_claim.lua``,
``lua/start_progress.lua``) checks the job's epoch, as the frontier's do.

It is the job's ``engine.StartRecord`` too: whichever worker runs a start request
records how it ended in the same hash (``lua/start_outcome.lua``), before the task is
settled, so the worker that queued them all reads the whole job's outcomes when the job
is finished. A worker writes "accepted" once; each refused start request is counted,
and the first ones are kept with their reason, to be named.
"""

from __future__ import annotations

import asyncio
import itertools
import logging
import uuid
from typing import TYPE_CHECKING, Any

import orjson
from redis.exceptions import ResponseError

from skitter._types import LISTED_STARTS, StartOutcomes
from skitter.exceptions import FrontierUnavailable
from skitter.redis import lost_error, redis_errors_translated, register

if TYPE_CHECKING:
    from redis.commands.core import AsyncScript

    from skitter.frontier.redis import ShardedRedisFrontier

__all__ = ["StartClaim"]

log = logging.getLogger("skitter.cluster")


class StartClaim:
    """One job's start requests, fed by one worker at a time."""

    def __init__(self, frontier: ShardedRedisFrontier, owner: str, lease_seconds: float) -> None:
        self._frontier = frontier
        self._owner = owner
        self._lease_ms = max(1000, int(lease_seconds * 1000))
        #: How often a feeder renews the claim while it waits for the queue to drain.
        self.renew_every = self._lease_ms / 3000
        keys = frontier.keys
        self._keys = [keys.meta, keys.start_claim, keys.start]
        self._claim = register(frontier.client, "start_claim", package="skitter.cluster")
        self._progress = register(frontier.client, "start_progress", package="skitter.cluster")
        self._outcome = register(frontier.client, "start_outcome", package="skitter.cluster")
        #: This worker recorded an accepted start request already (once is enough).
        self._accepted = False
        self._prefix = f"{owner}.{uuid.uuid4().hex[:8]}."
        self._attempts = itertools.count()
        self._token: str | None = None

    async def _call(
        self, script: AsyncScript, args: list[Any], keys: list[str] | None = None
    ) -> int:
        """One claim script, with the frontier's reading of Redis's errors (``_errors``)."""
        frontier = self._frontier
        if frontier.epoch is None:
            await frontier.open_job()
        epoch = frontier.epoch or ""
        try:
            with redis_errors_translated(f"Redis for {frontier.keys.name} (start requests)"):
                return int(await script(keys or self._keys, [epoch, *args]))
        except ResponseError as exc:
            lost = lost_error(frontier, str(exc))
            if lost is not None:
                raise lost from None
            raise

    async def wait_turn(self, poll: float = 1.0) -> int | None:
        """Block until this worker holds the claim (returns the offset to go on from) or
        the start requests are all queued (returns None). Redis unavailable (down, out
        of memory, read-only) is waited out; refused credentials raise a FatalError, and
        ``JobStateLost`` says the job's state vanished meanwhile."""
        while True:
            token = f"{self._prefix}{next(self._attempts)}"
            try:
                answer = await self._call(self._claim, [token, self._lease_ms])
            except FrontierUnavailable:
                answer = -2  # try again later
            if answer == -1:
                return None
            if answer >= 0:
                self._token = token
                if answer:
                    log.info("Taking over the start requests at position %d", answer)
                return answer
            await asyncio.sleep(poll)

    async def progress(self, offset: int) -> bool:
        """Record how many start requests are queued, and renew the claim: False when
        this worker no longer holds it (it lapsed, another worker took it over; nothing
        changed)."""
        return await self._record(offset, done=False)

    async def finished(self, offset: int) -> bool:
        """Every start request is queued: record it and give the claim up (False, and
        nothing changes, if this worker no longer held it)."""
        return await self._record(offset, done=True)

    async def _record(self, offset: int, *, done: bool) -> bool:
        if self._token is None:
            return False
        args = [self._token, self._lease_ms, int(offset), "1" if done else "0"]
        kept = bool(await self._call(self._progress, args))
        if not kept or done:
            self._token = None
        return kept

    # -- the job's StartRecord ---------------------------------------------------------------
    async def accepted(self) -> None:
        if self._accepted:
            return
        await self._call(self._outcome, ["accepted"], self._outcome_keys)
        self._accepted = True

    async def refused(self, url: str, reason: str) -> None:
        entry = orjson.dumps([url, reason])
        await self._call(self._outcome, ["refused", entry, LISTED_STARTS], self._outcome_keys)

    async def outcomes(self) -> StartOutcomes:
        """The whole job's, read once it is finished: from ``P:start``, or where the last
        worker out moved it when it cleared the job (``retire``)."""
        keys = self._frontier.keys
        client = self._frontier.client
        with redis_errors_translated(f"Redis for {keys.name} (start requests)"):
            fields = await client.hgetall(keys.start)
            if not fields:  # cleared by the last worker out: moved aside (``retire``)
                fields = await client.hgetall(keys.start_final)
        record = {_text(name): value for name, value in fields.items()}
        listed = []
        for n in range(1, LISTED_STARTS + 1):
            raw = record.get(f"refused:{n}")
            if raw is None:
                break
            url, reason = orjson.loads(raw)
            listed.append((str(url), str(reason)))
        return StartOutcomes(
            accepted="accepted" in record,
            refused=int(record.get("refused", 0)),
            listed=listed,
        )

    @property
    def _outcome_keys(self) -> list[str]:
        keys = self._frontier.keys
        return [keys.meta, keys.start]

    async def clear(self) -> None:
        keys = self._frontier.keys
        await self._frontier.client.delete(keys.start_claim, keys.start, keys.start_final)

    async def retire(self, ttl: float) -> None:
        """The job is cleared (its last worker out, REDIS_PERSIST off): a new run feeds
        its start requests again, while the record of how this run's ended is kept
        aside for ``ttl`` seconds, for the worker that queued them, which may still be
        finishing, to read."""
        keys = self._frontier.keys
        client = self._frontier.client
        await client.delete(keys.start_claim)
        try:
            await client.rename(keys.start, keys.start_final)
        except ResponseError:  # no record: nothing was fed, or another worker moved it
            return
        await client.pexpire(keys.start_final, max(1, int(ttl * 1000)))


def _text(raw: bytes | str) -> str:
    return raw.decode() if isinstance(raw, bytes) else raw
