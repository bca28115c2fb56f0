"""MemoryTaskQueue against a naive model, driven by a hypothesis state machine.

The model keeps every task in one dict and answers each question by brute force
(sorting, scanning). Any sequence of pushes, leases, acks, nacks, renewals, expiries
and clock moves must give the same answers from both: the lease order, merges, one
entry per taskid, no task lost through an expired lease, and the counts.
"""

from __future__ import annotations

from dataclasses import dataclass

import pytest
from hypothesis import HealthCheck, settings
from hypothesis import strategies as st
from hypothesis.stateful import RuleBasedStateMachine, invariant, precondition, rule

from skitter.frontier import FrontierCounts, Lease, MemoryTaskQueue, TaskState
from skitter.http import Request

PATHS = [f"p{i}" for i in range(6)] + ["p0#frag"]  # the fragment makes a twin of p0
LEASE = 30.0


def url(path: str) -> str:
    return f"http://example.com/{path}"


TASKIDS = {path: Request(url(path)).taskid for path in PATHS}


@dataclass
class Task:
    url: str
    priority: int
    seq: int
    where: str  # ready, delayed, processing, or a finished TaskState name
    when: float = 0.0  # exetime while delayed, deadline while processing
    lease: Lease | None = None  # the current attempt's, while processing
    retried: int = 0
    age: float = -1
    auto_recrawl: bool = False
    itag: str | None = None
    lastcrawltime: float = 0.0
    reason: str = ""
    failed_at: int = 0  # when it became FAILED or BAD, in steps: requeues keep that order

    @property
    def active(self) -> bool:
        return self.where in ("ready", "delayed", "processing")


class QueueMachine(RuleBasedStateMachine):
    pack = True  # ready tasks packed, as MemoryFrontier's queue keeps them

    def __init__(self) -> None:
        super().__init__()
        self.queue = MemoryTaskQueue(pack=self.pack)
        self.now = 1_000.0
        self.seq = 0
        self.model: dict[str, Task] = {}
        self.leases: list[Lease] = []  # every lease handed out: current, stale and over

    # -- model helpers ------------------------------------------------------------------
    def _promote(self) -> None:
        for task in self.model.values():
            if task.where == "delayed" and task.when <= self.now:
                task.where = "ready"

    def _place(self, task: Task, exetime: float) -> None:
        if exetime > self.now:
            task.where, task.when = "delayed", exetime
        else:
            task.where = "ready"

    def _current(self, lease: Lease) -> Task | None:
        task = self.model.get(lease.taskid)
        if task is None or task.where != "processing" or task.lease is not lease:
            return None
        return task

    def _leased(self) -> list[Lease]:
        return [t.lease for t in self.model.values() if t.where == "processing" and t.lease]

    # -- rules --------------------------------------------------------------------------
    @rule(
        path=st.sampled_from(PATHS),
        priority=st.integers(-2, 3),
        delay=st.sampled_from([None, 0.0, 5.0, 40.0]),
        force=st.booleans(),
        age=st.sampled_from([-1, 0, 20, 1000]),
        itag=st.sampled_from([None, "a", "b"]),
        auto_recrawl=st.booleans(),
    )
    def push(self, path, priority, delay, force, age, itag, auto_recrawl) -> None:
        exetime = 0.0 if delay is None else self.now + delay
        request = Request(
            url(path),
            priority=priority,
            exetime=exetime,
            age=age,
            itag=itag,
            auto_recrawl=auto_recrawl,
        )
        outcome = self.queue.push(request, self.now, force)
        taskid = TASKIDS[path]
        task = self.model.get(taskid)
        if task is not None and task.active:
            if task.where == "processing":
                assert outcome.name == "IGNORED"
                return
            assert outcome.name == "MERGED"
            task.priority = max(task.priority, priority)
            if task.where == "delayed" and not task.retried and exetime < task.when:
                self._place(task, exetime)
            return
        if task is not None:
            due = (itag is not None and itag != task.itag) or (
                age >= 0 and task.lastcrawltime + age <= self.now
            )
            if not (force or due):
                assert outcome.name == "IGNORED"
                return
            assert outcome.name == "RECRAWL"
            last = task.lastcrawltime
        else:
            assert outcome.name == "NEW"
            last = 0.0
        self.seq += 1
        new = Task(
            url(path),
            priority,
            self.seq,
            "ready",
            age=age,
            auto_recrawl=auto_recrawl,
            itag=itag,
            lastcrawltime=last,
        )
        self._place(new, exetime)
        self.model[taskid] = new

    @rule(limit=st.integers(0, 4), owner=st.sampled_from(["", "w"]))
    def lease(self, limit: int, owner: str) -> None:
        leases = self.queue.lease(limit, self.now, LEASE, owner)
        self._promote()
        ready = sorted(
            (task.priority * -1, task.seq, tid)
            for tid, task in self.model.items()
            if task.where == "ready"
        )[:limit]
        assert [lease.taskid for lease in leases] == [tid for _, _, tid in ready]
        for lease in leases:
            task = self.model[lease.taskid]
            assert lease.retried == task.retried
            request = lease.request
            assert request.url == task.url
            assert request.priority == task.priority, "merges raise the leased priority"
            assert (request.age, request.itag, request.auto_recrawl) == (
                task.age,
                task.itag,
                task.auto_recrawl,
            )
            assert lease.deadline == self.now + LEASE
            task.where, task.when, task.lease = "processing", self.now + LEASE, lease
        self.leases += leases

    @precondition(lambda self: self.leases)
    @rule(data=st.data())
    def ack(self, data) -> None:
        """Any lease handed out, current or not: only the current one is accepted."""
        lease = data.draw(st.sampled_from(self.leases))
        task = self._current(lease)
        assert self.queue.ack(lease, self.now) is (task is not None)
        if task is None:
            return
        task.where, task.lastcrawltime, task.reason = "SUCCESS", self.now, ""
        if task.auto_recrawl and task.age >= 0:
            self.seq += 1
            task.seq, task.retried = self.seq, 0
            self._place(task, self.now + task.age)

    @precondition(lambda self: self._leased())
    @rule(data=st.data(), retry=st.sampled_from([None, 0.0, 10.0]), bad=st.booleans())
    def fail(self, data, retry: float | None, bad: bool) -> None:
        lease = data.draw(st.sampled_from(self._leased()))
        task = self.model[lease.taskid]
        self.seq += 1
        task.failed_at = self.seq
        if bad:
            assert self.queue.mark_bad(lease, self.now, "bad")
            task.where, task.lastcrawltime, task.reason = "BAD", self.now, "bad"
        elif retry is None:
            assert self.queue.nack(lease, self.now, None, "failed")
            task.where, task.lastcrawltime, task.reason = "FAILED", self.now, "failed"
        else:
            assert self.queue.nack(lease, self.now, self.now + retry, "retry")
            task.retried += 1
            task.reason = "retry"
            self._place(task, self.now + retry)

    @precondition(lambda self: self.leases)
    @rule(data=st.data())
    def renew(self, data) -> None:
        leases = data.draw(st.lists(st.sampled_from(self.leases), max_size=3, unique=True))
        current = [t for t in (self._current(lease) for lease in leases) if t is not None]
        renewed = self.queue.renew(leases, self.now, LEASE)
        assert renewed == len(current)
        for task in current:
            task.when = self.now + LEASE
            assert task.lease is not None and task.lease.deadline == task.when

    @rule(state=st.sampled_from(["FAILED", "BAD"]))
    def requeue(self, state: str) -> None:
        """retry_failed / requeue_bad: every task in that state is queued again."""
        if state == "FAILED":
            count = self.queue.retry_failed(self.now)
        else:
            count = self.queue.requeue_bad(self.now)
        chosen = [task for task in self.model.values() if task.where == state]
        assert count == len(chosen)
        for task in sorted(chosen, key=lambda t: t.failed_at):  # in the order they failed
            self.seq += 1
            task.seq, task.retried, task.reason, task.where = self.seq, 0, "", "ready"

    @rule(seconds=st.sampled_from([0.0, 1.0, LEASE / 2, LEASE - 1, LEASE, LEASE + 1, 100.0]))
    def advance(self, seconds: float) -> None:
        self.now += seconds

    @rule(seconds=st.sampled_from([0.0, LEASE]))
    def advance_and_reclaim(self, seconds: float) -> None:
        self.now += seconds
        self.reclaim()

    @rule()
    def reclaim(self) -> None:
        expired = [t for t in self.model.values() if t.where == "processing" and t.when <= self.now]
        assert self.queue.reclaim_expired(self.now) == len(expired)
        for task in expired:
            task.where, task.lease = "ready", None

    # -- invariants -----------------------------------------------------------------------
    @invariant()
    def counts_match(self) -> None:
        self._promote()
        where = [task.where for task in self.model.values()]
        expected = FrontierCounts(
            where.count("ready"), where.count("delayed"), where.count("processing")
        )
        assert self.queue.counts(self.now) == expected
        assert len(self.queue) == sum(map(where.count, ("ready", "delayed", "processing")))

    @invariant()
    def next_due_matches(self) -> None:
        delayed = [task.when for task in self.model.values() if task.where == "delayed"]
        assert self.queue.next_due() == (min(delayed) if delayed else None)

    @invariant()
    def every_task_is_known(self) -> None:
        for taskid, task in self.model.items():
            info = self.queue.task(taskid)
            assert info is not None
            state = TaskState.ACTIVE if task.active else TaskState[task.where]
            assert (info.state, info.retried, info.lastcrawltime) == (
                state,
                task.retried,
                task.lastcrawltime,
            )
            if state in (TaskState.FAILED, TaskState.BAD) or task.active:
                assert info.url == task.url
                assert info.reason == task.reason


class UnpackedQueueMachine(QueueMachine):
    pack = False  # every task a record, as SqliteFrontier's queue keeps them


for machine in (QueueMachine, UnpackedQueueMachine):
    machine.TestCase.settings = settings(
        max_examples=200,
        stateful_step_count=50,
        deadline=None,
        suppress_health_check=[HealthCheck.too_slow],
    )
# Large searches: seconds even on an idle machine.
TestMemoryTaskQueueModel = pytest.mark.slow(QueueMachine.TestCase)
TestUnpackedMemoryTaskQueueModel = pytest.mark.slow(UnpackedQueueMachine.TestCase)
