"""The coordinator's side of ``RemoteFrontier``: the real frontier, served to N workers.

**Slot affinity.** A task goes only to the worker that owns its slot: a stable hash of
its host (or its ``download_slot``) modulo N. So every politeness limit that lives in
one process's scheduler (per-slot concurrency and delays, Crawl-delay, robots.txt, the
slot breakers, AutoThrottle) holds for the whole crawl without one message between
workers; the price is that a crawl of one host keeps one process busy.

To lease for worker ``w``, the service leases from the real frontier in priority order
and keeps what belongs to the others in their **stash** (bounded; those leases stay
theirs, renewed here). A task handed to a worker is known by a token of this run; the
real lease never leaves this process.

**A worker that dies** (its socket closes without a goodbye: kill -9, a crash) has its
handed tasks put back in its stash at once, for the worker that takes its place: no
retry is spent and nothing waits for a lease to expire. Its old tokens are forgotten,
so a settle from the dead attempt could never land.

**Links in flight.** A worker pushes in two steps: the task keys (``known``), then
in full the requests the coordinator cannot drop from the key alone. Pages crawled at
the same time link to the same new pages, so between the two steps another page's push
asks for the same key: it is told MERGED (the first asker's push, at the same or a
higher priority, is on its way) instead of sending, and having decoded, a second copy.
The promise ends with the first asker's push (or its ``release``, or its worker's end):
a worker killed in between leaves its page unsettled, and that page, run again, pushes
its links again.

**Items** come with the call that settles a task; ``store_items`` writes them before the
frontier records the task settled (the rule of the one-process crawl: items flushed
before the ack), and only for a token that is still handed out.
"""

from __future__ import annotations

import heapq
import itertools
import logging
import zlib
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any

from skitter.frontier import Frontier, Lease, PushOutcome, TaskInfo, TaskState
from skitter.http import Request
from skitter.http.wiring import decode_request, encode_request
from skitter.scheduler import slot_key

__all__ = ["FrontierService", "owner_of"]

log = logging.getLogger("skitter.multiproc")

#: Leases the service may hold in stashes for all workers together.
STASH_MAX = 20_000
#: The fewest tasks leased from the real frontier at once when there are stashes.
BATCH = 64
#: Requests whose bytes, as pushed, are kept to be sent as such when leased.
WIRE_MAX = 50_000
_MERGED = int(PushOutcome.MERGED)


def owner_of(request: Request, workers: int, slot_of: Callable[[Request], str] = slot_key) -> int:
    """The worker that owns the request's slot (``slot_of``: by host, or host and port,
    as DOWNLOAD_SLOT_BY says; by IP, the host), stable across runs and processes."""
    if workers == 1:
        return 0
    return zlib.crc32(slot_of(request).encode()) % workers


def _row(info: TaskInfo | None) -> list[Any] | None:
    if info is None:
        return None
    return [info.taskid, info.url, int(info.state), info.retried, info.lastcrawltime, info.reason]


@dataclass
class _Stash:
    """One worker's leases waiting for it, best first (priority, then arrival)."""

    heap: list[tuple[int, int, Lease]] = field(default_factory=list)

    def put(self, lease: Lease, order: int) -> None:
        heapq.heappush(self.heap, (-lease.request.priority, order, lease))

    def take(self, limit: int) -> list[Lease]:
        heap = self.heap
        return [heapq.heappop(heap)[2] for _ in range(min(limit, len(heap)))]

    def __len__(self) -> int:
        return len(self.heap)


class FrontierService:
    """Serves ``frontier`` to ``workers`` processes; see the module."""

    def __init__(
        self,
        frontier: Frontier,
        spider: object,
        workers: int,
        store_items: Callable[[list[Any]], None] = lambda _: None,
        slot_of: Callable[[Request], str] = slot_key,
    ) -> None:
        self._slot_of = slot_of
        self.frontier = frontier
        self.workers = workers
        self._spider = spider
        self._store_items = store_items
        self._stash = [_Stash() for _ in range(workers)]
        self._handed: dict[str, tuple[int, Lease]] = {}
        self._tokens = itertools.count(1)
        #: The bytes a queued task's request was pushed in, by taskid, while the
        #: frontier keeps that request unchanged: its lease sends them, not a new
        #: encoding of the request (see ``_keep_wire``).
        self._wire: dict[str, bytes] = {}
        self._order = itertools.count()
        #: Frames served, settles, leases handed: the coordinator's cost per page.
        self.calls = 0
        #: Requests pushed, and those of them decoded (not dropped as plain repeats).
        self.pushed = self.decoded = 0
        #: Keys answered "not known" whose push is still to come: key -> [worker,
        #: priority, askers told MERGED meanwhile] (see the module).
        self._promised: dict[Any, list[int]] = {}
        #: Added to ``processing`` while start requests are still to come (worker 0
        #: feeds them), so no worker takes an empty queue for the end of the crawl.
        self.pending_starts = False

    @property
    def stashed(self) -> int:
        return sum(len(stash) for stash in self._stash)

    # -- leases -------------------------------------------------------------------------
    async def lease(self, worker: int, limit: int, now: float, lease_seconds: float) -> list[Any]:
        stash = self._stash[worker]
        taken = stash.take(limit)
        if taken:  # held here since: each deadline becomes the worker's
            taken = await self._still_current(taken, now, lease_seconds)
        while len(taken) < limit and self.stashed < STASH_MAX:
            want = limit - len(taken)
            ask = want if self.workers == 1 else max(want, BATCH)
            batch = await self.frontier.lease(ask, now, lease_seconds, f"process-{worker}")
            for lease in batch:
                owner = owner_of(lease.request, self.workers, self._slot_of)
                if owner == worker and len(taken) < limit:
                    taken.append(lease)
                else:
                    self._stash[owner].put(lease, next(self._order))
            if len(batch) < ask:
                break
        spider = self._spider
        wire = self._wire
        rows = []
        for lease in taken:
            token = f"{worker}.{next(self._tokens)}"
            self._handed[token] = (worker, lease)
            data = wire.pop(lease.taskid, None) or encode_request(lease.request, spider)
            rows.append([lease.taskid, data, lease.retried, lease.deadline, token])
        return rows

    async def _still_current(
        self, leases: list[Lease], now: float, lease_seconds: float
    ) -> list[Lease]:
        """Renew stashed leases to the worker's deadline; those the frontier took back
        (expired and reclaimed) are dropped: they are queued there again."""
        renew = self.frontier.renew
        return [lease for lease in leases if await renew([lease], now, lease_seconds)]

    async def renew_stashed(self, now: float, lease_seconds: float) -> None:
        """Keep the stashed leases alive (the coordinator's upkeep calls it)."""
        held = [entry[2] for stash in self._stash for entry in stash.heap]
        if held:
            await self.frontier.renew(held, now, lease_seconds)

    def worker_lost(self, worker: int) -> int:
        """Worker ``worker`` is gone: its handed tasks wait in its stash for the next;
        the pushes it promised will not come (the pages that found those links run
        again and push them again)."""
        promised = self._promised
        for key in [key for key, promise in promised.items() if promise[0] == worker]:
            del promised[key]
        lost = [token for token, (owner, _) in self._handed.items() if owner == worker]
        stash = self._stash[worker]
        for token in lost:
            stash.put(self._handed.pop(token)[1], next(self._order))
        return len(lost)

    # -- settling -------------------------------------------------------------------------
    def _settling(self, token: str, items: list[Any] | None) -> Lease | None:
        handed = self._handed.pop(token, None)
        if handed is None:
            return None
        if items:
            self._store_items(items)
        return handed[1]

    async def ack(self, worker: int, token: str, now: float, items: list[Any] | None) -> bool:
        lease = self._settling(token, items)
        return lease is not None and await self.frontier.ack(lease, now)

    async def nack(
        self,
        worker: int,
        token: str,
        now: float,
        retry_at: float | None,
        reason: str,
        items: list[Any] | None,
    ) -> bool:
        lease = self._settling(token, items)
        return lease is not None and await self.frontier.nack(lease, now, retry_at, reason)

    async def bad(
        self, worker: int, token: str, now: float, reason: str, items: list[Any] | None
    ) -> bool:
        lease = self._settling(token, items)
        return lease is not None and await self.frontier.mark_bad(lease, now, reason)

    async def renew(
        self, worker: int, tokens: Sequence[str], now: float, lease_seconds: float
    ) -> list[float | None]:
        out: list[float | None] = []
        for token in tokens:  # one by one: the frontier says which are still current
            entry = self._handed.get(token)
            ok = entry is not None and await self.frontier.renew([entry[1]], now, lease_seconds)
            out.append(entry[1].deadline if ok and entry is not None else None)
        return out

    # -- the rest of the contract ---------------------------------------------------------
    async def push(
        self, worker: int, wire: list[list[Any]], now: float, force: list[bool] | None
    ) -> list[int]:
        """Each entry is ``[key, priority, age, plain, encoded request]``: a plain repeat
        that would change nothing is answered without decoding it (most links are).
        The worker's promises of these keys are kept, or released if the push fails."""
        try:
            outcomes = await self._push(wire, now, force)
        except BaseException:
            await self.release(worker, [entry[0] for entry in wire if entry[3]])
            raise
        promised = self._promised
        for key, _, _, plain, _ in wire:
            if plain and (promise := promised.get(key)) is not None and promise[0] == worker:
                del promised[key]
        return outcomes

    async def _push(self, wire: list[list[Any]], now: float, force: list[bool] | None) -> list[int]:
        frontier, spider = self.frontier, self._spider
        duplicate = frontier.plain_duplicate
        outcomes: list[int] = []
        places: list[int] = []
        requests: list[Request] = []
        for i, (key, priority, age, plain, data) in enumerate(wire):
            if plain and (known := duplicate(key, priority, age, now)) is not None:
                outcomes.append(int(known))
                continue
            outcomes.append(0)
            places.append(i)
            requests.append(decode_request(data, spider))
        if requests:
            flags = [force[i] for i in places] if force else None
            pushed = await frontier.push(requests, now, force=flags)
            for i, request, outcome in zip(places, requests, pushed, strict=True):
                outcomes[i] = int(outcome)
                self._keep_wire(request.taskid, wire[i][4], outcome)
        self.decoded += len(requests)
        return outcomes

    def _keep_wire(self, taskid: str, data: bytes, outcome: PushOutcome) -> None:
        """Keep ``data`` for the lease of a request queued as pushed (NEW, RECRAWL);
        forget it when the push changed the queued one (a merge may raise its priority
        or move its time), keep it when nothing changed (IGNORED). Bounded: beyond
        WIRE_MAX a lease encodes its request again, as without it."""
        wire = self._wire
        if outcome in (PushOutcome.NEW, PushOutcome.RECRAWL):
            if len(wire) < WIRE_MAX:
                wire[taskid] = data
        elif outcome == PushOutcome.MERGED:
            wire.pop(taskid, None)

    async def known(self, worker: int, keys: list[list[Any]], now: float) -> list[int]:
        """For each ``[key, priority, age, plain]``, the outcome of a plain repeat that
        would change nothing, else 0: the worker sends those requests in full. A key
        already answered 0 to a push still to come is MERGED at the same or a lower
        priority (see the module)."""
        duplicate = self.frontier.plain_duplicate
        promised = self._promised
        out = []
        for key, priority, age, plain in keys:
            if not plain:
                out.append(0)
            elif (known := duplicate(key, priority, age, now)) is not None:
                out.append(int(known))
            elif (promise := promised.get(key)) is None:
                promised[key] = [worker, priority, 0]
                out.append(0)
            elif priority <= promise[1]:
                promise[2] += 1
                out.append(_MERGED)
            else:  # a higher priority: only the frontier can merge it
                out.append(0)
        self.pushed += len(keys)
        return out

    async def release(self, worker: int, keys: list[Any]) -> None:
        """``worker`` will not push ``keys`` after all (it could not encode them, or its
        push was cancelled): their promises end. Links told MERGED on the strength of
        one were dropped: said loudly, it should never happen."""
        for key in keys:
            promise = self._promised.get(key)
            if promise is None or promise[0] != worker:
                continue
            del self._promised[key]
            if promise[2]:
                log.warning(
                    "%d link(s) to task %s were dropped as repeats of a push that did not "
                    "come (the request could not be queued)",
                    promise[2],
                    key,
                )

    async def reclaim(self, worker: int, now: float) -> int:
        return await self.frontier.reclaim_expired(now)

    async def counts(self, worker: int, now: float) -> list[int]:
        counts = await self.frontier.counts(now)
        stashed = self.stashed  # processing for the frontier, ready for the workers
        processing = counts.processing - stashed + int(self.pending_starts)
        return [counts.ready + stashed, counts.delayed, processing]

    async def next_due(self, worker: int) -> float | None:
        return await self.frontier.next_due()

    async def task(self, worker: int, taskid: str) -> list[Any] | None:
        return _row(await self.frontier.task(taskid))

    async def tasks(self, worker: int, state: int, limit: int) -> list[Any]:
        return [_row(info) for info in await self.frontier.tasks(TaskState(state), limit)]

    async def retry_failed(
        self, worker: int, now: float, domain: str | None, reason: str | None
    ) -> int:
        return await self.frontier.retry_failed(now, domain=domain, reason=reason)

    async def requeue_bad(
        self, worker: int, now: float, domain: str | None, reason: str | None
    ) -> int:
        return await self.frontier.requeue_bad(now, domain=domain, reason=reason)

    #: The ops a worker may call, by name.
    OPS = frozenset(
        {
            "lease",
            "ack",
            "nack",
            "bad",
            "renew",
            "push",
            "known",
            "release",
            "reclaim",
            "counts",
            "next_due",
            "task",
            "tasks",
            "retry_failed",
            "requeue_bad",
        }
    )

    async def handle(self, worker: int, op: str, args: list[Any]) -> Any:
        self.calls += 1
        if op not in self.OPS:
            raise ValueError(f"unknown op {op!r}")
        return await getattr(self, op)(worker, *args)
