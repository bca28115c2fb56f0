"""The frontier contract: a durable task store with leases.

One frontier holds one project's tasks. Every backend (memory, SQLite, Redis) keeps
the same promises, checked by one contract suite (``skitter.testing.frontier_contract``):

- **one entry per taskid**: pushing a taskid that is queued (ready or delayed) merges
  into the queued entry: the higher priority and the earlier exetime win, except that a
  task waiting for a retry keeps its retry time (a failing page is not made due again
  by every page that links to it);
- **order**: ``lease`` hands out due tasks by priority (higher first), strictly FIFO
  within a priority (by first push);
- **delayed tasks**: a task whose exetime is in the future is not leased before then;
- **leases**: a leased task is *processing* until ``ack`` or ``nack``; one whose lease
  deadline passes is put back in the ready queue by ``reclaim_expired`` (a lost worker
  never loses a task);
- **fencing by lease**: the ``Lease`` that ``lease`` hands out is the handle of that one
  attempt, and ``ack``, ``nack``, ``mark_bad`` and ``renew`` take it. Once it is not
  current (it expired and was reclaimed, maybe re-leased to another worker or to this
  same one) every one of them is refused (returns False, changes nothing): a stale run
  can never settle or extend a newer attempt of the same task, wherever it runs;
- **states**: ack marks SUCCESS with ``lastcrawltime``; nack with a retry time puts the
  task back, delayed, with ``retried`` + 1; nack without one marks FAILED with the
  reason; ``mark_bad`` marks BAD (a request that can never succeed, or whose stored
  form this code cannot run: ``requeue_bad`` puts it back once the code is fixed);
- **recrawl**: pushing a finished taskid queues it again only if its ``age`` has passed
  since lastcrawltime, or its ``itag`` changed; ``force=True`` (dont_filter) always
  queues it; ``auto_recrawl`` puts a task back at ``lastcrawltime + age`` on success.

Times are epoch seconds (``Clock.time()``): they are stored, shared between machines
and compared across restarts, which a monotonic clock cannot be.
"""

from __future__ import annotations

import enum
from abc import ABC, abstractmethod
from collections.abc import Sequence
from dataclasses import dataclass

from skitter.http import Request

__all__ = ["Frontier", "FrontierCounts", "Lease", "PushOutcome", "TaskInfo", "TaskState"]


class TaskState(enum.IntEnum):
    ACTIVE = 1
    SUCCESS = 2
    FAILED = 3
    BAD = 4


class PushOutcome(enum.IntEnum):
    NEW = 1  # first time this taskid is queued
    MERGED = 2  # merged into the queued entry of the same taskid
    RECRAWL = 3  # finished before, queued again (age passed, itag changed, or forced)
    IGNORED = 4  # finished and not due for a recrawl


@dataclass(slots=True, eq=False)
class Lease:
    """One attempt at a task, handed out by ``lease``: the handle that settles it.

    ``retried`` counts failed attempts so far; ``deadline`` is when the lease lapses
    (on the caller's clock; ``renew`` moves it). ``token`` is the backend's fencing
    token, opaque to everyone else (the Redis frontier's names the lease call; the
    in-process backends fence by the object itself). Leases compare and hash by
    identity: two attempts at one task are two leases."""

    taskid: str
    request: Request
    retried: int
    deadline: float
    token: str = ""


@dataclass(slots=True, frozen=True)
class FrontierCounts:
    ready: int
    delayed: int
    processing: int

    @property
    def queued(self) -> int:
        return self.ready + self.delayed


@dataclass(slots=True, frozen=True)
class TaskInfo:
    """What is known of one task, for status pages and ``skitter job``."""

    taskid: str
    url: str
    state: TaskState
    retried: int
    lastcrawltime: float
    reason: str


class Frontier(ABC):
    """A project's task store. All methods are coroutines so that durable backends can
    do I/O; batch methods exist so that they can do it in few round trips."""

    @abstractmethod
    async def push(
        self, requests: Sequence[Request], now: float, *, force: Sequence[bool] | None = None
    ) -> list[PushOutcome]:
        """Queue requests (at ``max(request.exetime, now)``) under ``request.taskid``.

        ``force[i]`` queues request i even if it finished recently (dont_filter).
        """

    @abstractmethod
    async def lease(
        self, limit: int, now: float, lease_seconds: float, owner: str = ""
    ) -> list[Lease]:
        """Up to ``limit`` due tasks, best first, each moved to processing until
        ``now + lease_seconds``. Delayed tasks that are due move to ready first.
        ``owner`` names the worker, for people looking at the store; it fences nothing
        (the lease does)."""

    @abstractmethod
    async def ack(self, lease: Lease, now: float) -> bool:
        """The attempt succeeded. False if ``lease`` is not current (nothing changes)."""

    @abstractmethod
    async def nack(self, lease: Lease, now: float, retry_at: float | None, reason: str) -> bool:
        """The attempt failed: retry at ``retry_at``, or FAILED if None. False if
        ``lease`` is not current."""

    @abstractmethod
    async def mark_bad(self, lease: Lease, now: float, reason: str) -> bool:
        """The task can never succeed (bad URL, callback missing): BAD, not retried.
        False if ``lease`` is not current."""

    @abstractmethod
    async def renew(self, leases: Sequence[Lease], now: float, lease_seconds: float) -> int:
        """Extend the leases still current to ``now + lease_seconds`` (their ``deadline``
        moves); returns how many were."""

    @abstractmethod
    async def reclaim_expired(self, now: float) -> int:
        """Put processing tasks whose lease has expired back in the ready queue."""

    @abstractmethod
    async def counts(self, now: float) -> FrontierCounts:
        """Tasks ready (due), delayed (not yet due) and processing."""

    @abstractmethod
    async def next_due(self) -> float | None:
        """The earliest exetime among delayed tasks, or None when there are none."""

    @abstractmethod
    async def task(self, taskid: str) -> TaskInfo | None:
        """What is known of one taskid."""

    async def tasks(self, state: TaskState, limit: int = 100) -> list[TaskInfo]:
        """Finished tasks in ``state`` (FAILED and BAD with their reasons), most recent
        first: for status pages and ``skitter job``."""
        raise NotImplementedError(f"{type(self).__name__} cannot list tasks yet")

    async def retry_failed(
        self, now: float, *, domain: str | None = None, reason: str | None = None
    ) -> int:
        """Queue FAILED tasks again with ``retried`` reset (all of them, or those whose
        host is ``domain`` or a subdomain, or whose reason contains ``reason``); returns
        how many. Each task's change of state is atomic."""
        raise NotImplementedError(f"{type(self).__name__} cannot retry failed tasks yet")

    async def requeue_bad(
        self, now: float, *, domain: str | None = None, reason: str | None = None
    ) -> int:
        """Queue BAD tasks again with ``retried`` reset, filtered as ``retry_failed``
        does: for when the code is fixed (a callback renamed back, a worker upgraded to
        read a newer format). A task that is still bad is marked BAD again when it is
        leased. Returns how many were queued."""
        raise NotImplementedError(f"{type(self).__name__} cannot requeue bad tasks yet")

    def plain_duplicate(
        self, key: bytes | str, priority: int, age: float, now: float
    ) -> PushOutcome | None:
        """The outcome of pushing (unforced, without an itag) a request of task ``key``
        (its taskid, or its fingerprint) at ``priority`` with ``age``, when the backend
        can tell cheaply that the push would change nothing; None (the default) when
        only ``push`` can say. Lets a frontier served to other processes drop repeated
        links without decoding them."""
        return None

    async def close(self) -> None:  # noqa: B027 - optional hook
        """Release resources (connections, files)."""
