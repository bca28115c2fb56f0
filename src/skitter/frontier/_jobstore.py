"""The persistence seam: what a job directory needs of the store that keeps its tasks.

A crawl with ``--job-dir`` stops and goes on later. The job directory (``skitter._job``)
decides *what* a job records besides its tasks (feed sizes, statistics, the spider's
state) and what its modes mean; a ``JobStore`` keeps the tasks and records the rest
with them. ``SqliteFrontier`` is the one implementation: a ``Frontier`` that is also a
``JobStore``. The job directory and ``skitter job`` use only this protocol.

The contract:

- **One transaction per write.** The store writes its changes now and then (behind the
  operations, or on ``flush``); each write first calls ``checkpoint`` and stores what
  it returns (JSON values by key, read back by ``meta``) in the same transaction as the
  tasks. So after a crash the tasks and the checkpoint always agree: both are as of the
  last write. A checkpoint that raises ``StorageError`` refuses the write: nothing of
  it is recorded (a feed that lost items must not see their tasks marked done).
- **Failure is final and loud.** A write that fails breaks the store: ``on_error``
  hears of a failure in the background at once, and every later operation raises
  ``StorageError``; the storage keeps the state of the last good write.
- **Loading.** ``load`` reads the job (once) and reports what it found: tasks by state,
  in-flight ones queued again (their process is gone), stored requests that no longer
  decode (marked BAD, their reason kept, queued again by ``requeue`` once fixed).
- **Modes, between crawls.** ``flush_all`` forgets every task (the queue and the dupe
  filter), ``clear_meta`` the checkpoint; ``mark_all_due`` queues every finished task
  but the BAD ones again; ``requeue`` queues FAILED or BAD ones again. These three
  refuse (RuntimeError) while tasks are in flight.
- **Inspecting, with no spider.** ``job_counts``, ``tasks`` and ``meta`` read what is
  stored without decoding requests, so ``skitter job DIR`` works even for a job whose
  spider changed or is gone.
- ``close`` writes what is pending and releases the storage; it raises if the store
  ever failed.
"""

from __future__ import annotations

from collections.abc import Callable, Collection, Mapping
from dataclasses import dataclass
from typing import Any, Protocol

from skitter.exceptions import StorageError
from skitter.frontier._base import TaskInfo, TaskState

__all__ = ["JobCounts", "JobStore", "ResumeReport"]


@dataclass(frozen=True, slots=True)
class JobCounts:
    """Tasks in storage by state; ``queued`` and ``processing`` are both ACTIVE."""

    queued: int
    processing: int
    succeeded: int
    failed: int
    bad: int


@dataclass(frozen=True, slots=True)
class ResumeReport:
    """What ``load()`` found: for "resuming N queued, M in-flight reclaimed"."""

    found: JobCounts
    reclaimed: int  # in-flight tasks of a previous process, queued again
    undecodable: int  # queued tasks whose request no longer decodes: now BAD

    @property
    def queued(self) -> int:
        return self.found.queued + self.reclaimed


class JobStore(Protocol):
    """The tasks of a job and the checkpoint written with them (module docstring)."""

    #: Called at the start of every write; what it returns is stored with the tasks.
    checkpoint: Callable[[], Mapping[str, Any]] | None
    #: Called when a write behind fails in the background (between operations).
    on_error: Callable[[StorageError], None] | None

    async def load(self) -> ResumeReport:
        """Read the job (once) and report what was found."""
        ...

    async def meta(self) -> dict[str, Any]:
        """What the last checkpoint stored (empty for a new job); ConfigError if a value
        is not JSON."""
        ...

    async def flush(self) -> None:
        """Write every change made so far, in one transaction."""
        ...

    async def flush_all(self) -> None:
        """Forget every task, queued or finished (the queue and the dupe filter)."""
        ...

    async def clear_meta(self) -> None:
        """Forget what checkpoints stored."""
        ...

    async def mark_all_due(self) -> int:
        """Queue every finished task but the BAD ones again, and make every queued one
        due now; how many were queued again."""
        ...

    async def requeue(
        self,
        match: Callable[[TaskInfo], bool] | None = None,
        *,
        states: Collection[TaskState] = (TaskState.FAILED,),
    ) -> int:
        """Queue the finished tasks in ``states`` (FAILED, BAD) that ``match`` picks
        again, at the back, with a fresh round of retries; how many."""
        ...

    async def job_counts(self) -> JobCounts:
        """Tasks in storage by state (after writing pending changes)."""
        ...

    async def tasks(self, state: TaskState | None = None, limit: int = -1) -> list[TaskInfo]:
        """Stored tasks: queued ones in queue order, finished ones most recent first;
        all of them when ``state`` is None."""
        ...

    async def close(self) -> None:
        """Write what is pending and release the storage; raises if a write ever failed."""
        ...
