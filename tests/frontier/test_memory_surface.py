"""The memory queue's surface for persistence adapters: ``on_change``, ``view``,
``restore`` and ``stage`` (the ``skitter.frontier._memory`` package docstring).

The two properties a write-behind store rests on are checked on random walks: every
change is reported (a mirror that re-reads the reported tasks after each operation
always equals the queue), and ``restore`` is ``view``'s inverse (a queue rebuilt from
the views of its tasks answers as the original does, leases excepted).

The queues here keep every request as it was pushed (``pack=False``), as an adapter's
does: the views are compared whole, requests by identity.
"""

from __future__ import annotations

import random
from typing import Any

import pytest

from skitter.exceptions import InvalidURL
from skitter.frontier import (
    FrontierCounts,
    Lease,
    MemoryTaskQueue,
    PushOutcome,
    TaskState,
    TaskView,
)
from skitter.frontier._memory import TaskKey, request_key, task_key
from skitter.http import Request

T0 = 1_700_000_000.0
LEASE = 60.0
PATHS = [f"p{i}" for i in range(12)]


def req(path: str, **kwargs: Any) -> Request:
    return Request(f"http://example.com/{path}", **kwargs)


def key(path: str) -> TaskKey:
    return request_key(req(path))


class Recorder:
    def __init__(self, queue: MemoryTaskQueue) -> None:
        self.seen: list[TaskKey] = []
        queue.on_change = self.seen.append

    def take(self) -> set[TaskKey]:
        seen = set(self.seen)
        self.seen.clear()
        return seen


# -- on_change: what is reported ----------------------------------------------------------
def test_each_kind_of_change_is_reported_and_a_merge_that_changes_nothing_is_not() -> None:
    queue = MemoryTaskQueue(pack=False)
    heard = Recorder(queue)
    assert queue.push(req("a"), T0) is PushOutcome.NEW
    assert queue.push(req("later", exetime=T0 + 50), T0) is PushOutcome.NEW
    assert heard.take() == {key("a"), key("later")}
    assert queue.push(req("a"), T0) is PushOutcome.MERGED  # nothing changes
    assert queue.push(req("later", exetime=T0 + 90), T0) is PushOutcome.MERGED  # later: kept
    assert heard.take() == set()
    queue.push(req("a", priority=3), T0)  # raises the priority
    queue.push(req("later", exetime=T0 + 10), T0)  # due earlier
    assert heard.take() == {key("a"), key("later")}
    (lease,) = queue.lease(1, T0, LEASE)
    assert heard.take() == {key("a")}
    assert queue.renew([lease], T0 + 1, LEASE) == 1
    assert heard.take() == {key("a")}
    assert queue.nack(lease, T0 + 2, T0 + 2, "HTTP 503")
    assert heard.take() == {key("a")}
    (lease,) = queue.lease(1, T0 + 2, LEASE)
    heard.take()
    assert queue.reclaim_expired(T0 + 2 + LEASE) == 1
    assert heard.take() == {key("a")}
    assert queue.counts(T0 + 50) == FrontierCounts(2, 0, 0)  # "later" became due
    assert heard.take() == set(), "a delayed task becoming due is not a change"
    a, later = queue.lease(2, T0 + 50, LEASE)
    heard.take()
    assert queue.ack(a, T0 + 51) and queue.mark_bad(later, T0 + 51, "gone")
    assert heard.take() == {key("a"), key("later")}
    assert queue.requeue_bad(T0 + 52) == 1
    assert heard.take() == {key("later")}


def test_stale_attempts_and_refused_operations_report_nothing() -> None:
    queue = MemoryTaskQueue(pack=False)
    queue.push(req("a"), T0)
    (stale,) = queue.lease(1, T0, LEASE)
    queue.reclaim_expired(T0 + LEASE)
    heard = Recorder(queue)
    assert not queue.ack(stale, T0 + LEASE)
    assert not queue.nack(stale, T0 + LEASE, None, "x")
    assert not queue.mark_bad(stale, T0 + LEASE, "x")
    assert queue.renew([stale], T0 + LEASE, LEASE) == 0
    assert queue.push(req("a"), T0) is PushOutcome.MERGED
    assert heard.take() == set()


def test_an_ack_that_queues_an_auto_recrawl_reports_the_task() -> None:
    queue = MemoryTaskQueue(pack=False)
    queue.push(req("a", age=100, auto_recrawl=True), T0)
    (lease,) = queue.lease(1, T0, LEASE)
    heard = Recorder(queue)
    assert queue.ack(lease, T0)
    assert heard.take() == {key("a")}
    view = queue.view(key("a"))
    assert view is not None and (view.state, view.exetime) == (TaskState.ACTIVE, T0 + 100)


# -- view ---------------------------------------------------------------------------------
def test_view_describes_each_state() -> None:
    queue = MemoryTaskQueue(pack=False)
    queue.push(req("ready", priority=2), T0)
    queue.push(req("delayed", exetime=T0 + 30, itag="v1"), T0)
    queue.push(req("failed"), T0)
    assert queue.view(key("nothing")) is None
    ready = queue.view(key("ready"))
    assert ready is not None and ready.request is not None
    assert (ready.state, ready.priority, ready.seq, ready.exetime, ready.deadline) == (
        TaskState.ACTIVE, 2, 0, 0.0, None,
    )  # fmt: skip
    assert ready.taskid == req("ready").taskid and ready.request.url == ready.url
    delayed = queue.view(key("delayed"))
    assert delayed is not None
    assert (delayed.seq, delayed.exetime, delayed.itag) == (1, T0 + 30, "v1")
    ready_lease, failed_lease = queue.lease(2, T0, LEASE, owner="w1")
    processing = queue.view(key("ready"))
    assert processing is not None
    assert (processing.deadline, processing.owner, processing.exetime) == (T0 + LEASE, "w1", 0.0)
    assert queue.seq_of(key("ready")) == 0 and key("ready") in queue.active_keys()
    assert queue.nack(failed_lease, T0 + 1, None, "HTTP 500")
    assert queue.ack(ready_lease, T0 + 2)
    assert queue.view(key("failed")) == TaskView(
        req("failed").taskid, TaskState.FAILED, None, None, None, 0.0, None, "", 0, T0 + 1,
        "HTTP 500", None, "http://example.com/failed",
    )  # fmt: skip
    assert queue.view(key("ready")) == TaskView(
        req("ready").taskid, TaskState.SUCCESS, None, None, None, 0.0, None, "", 0, T0 + 2, "",
        None, "",
    )  # fmt: skip
    assert queue.seq_of(key("ready")) is None and key("ready") not in queue.active_keys()


# -- the two properties, on random walks --------------------------------------------------
def _step(queue: MemoryTaskQueue, rng: random.Random, now: float, held: list[Lease]) -> None:
    """One random operation, as a crawl makes them."""
    op = rng.random()
    if op < 0.4:
        path = rng.choice(PATHS)
        request = req(
            path,
            priority=rng.randrange(3),
            exetime=now + rng.choice([0, 0, 5, 30]),
            age=rng.choice([-1, 10]),
            itag=rng.choice([None, "x"]),
            auto_recrawl=rng.random() < 0.1,
        )
        queue.push(request, now, rng.random() < 0.1)
    elif op < 0.6:
        held.extend(queue.lease(rng.randrange(1, 3), now, LEASE, rng.choice(["", "w"])))
    elif op < 0.85 and held:
        lease = held.pop(rng.randrange(len(held)))
        kind = rng.choice(["ack", "retry", "fail", "bad", "renew"])
        if kind == "ack":
            queue.ack(lease, now)
        elif kind == "retry":
            queue.nack(lease, now, now + rng.choice([0, 3]), "again")
        elif kind == "fail":
            queue.nack(lease, now, None, "failed")
        elif kind == "bad":
            queue.mark_bad(lease, now, "bad")
        else:
            queue.renew([lease], now, LEASE)
            held.append(lease)
    elif op < 0.92:
        queue.reclaim_expired(now)
    else:
        queue.retry_failed(now) if rng.random() < 0.5 else queue.requeue_bad(now)


def _as_of(view: TaskView | None, now: float) -> TaskView | None:
    """A delayed task that is due reads as ready (the one change not reported)."""
    if view is not None and 0 < view.exetime <= now:
        return view._replace(exetime=0.0)
    return view


@pytest.mark.parametrize("seed", range(6))
def test_every_change_is_reported(seed: int) -> None:
    rng = random.Random(seed)
    queue = MemoryTaskQueue(pack=False)
    changed: set[TaskKey] = set()
    queue.on_change = changed.add
    mirror: dict[TaskKey, TaskView | None] = {}
    keys = [key(path) for path in PATHS]
    now, held = T0, []
    for step in range(500):
        now += rng.choice([0, 0, 1, 7, LEASE])
        _step(queue, rng, now, held)
        for k in changed:  # what a write-behind store does at each write
            mirror[k] = queue.view(k)
        changed.clear()
        for k in keys:
            assert _as_of(mirror.get(k), now) == _as_of(queue.view(k), now), (step, k)


def _rebuilt(queue: MemoryTaskQueue, keys: list[TaskKey]) -> MemoryTaskQueue:
    """A new queue restored from the views of ``queue``'s tasks (in taskid order, not
    the queue's: restoring places them)."""
    again = MemoryTaskQueue(pack=False)
    heard = Recorder(again)
    views = [view for k in keys if (view := queue.view(k)) is not None]
    for view in sorted(views, key=lambda v: v.taskid):
        again.restore(view)
    assert heard.take() == set(), "restoring is not a change"
    return again


def _same(a: MemoryTaskQueue, b: MemoryTaskQueue, keys: list[TaskKey], now: float) -> None:
    assert a.counts(now) == b.counts(now)
    assert a.next_due() == b.next_due()
    for k in keys:
        assert _as_of(a.view(k), now) == _as_of(b.view(k), now), k


@pytest.mark.parametrize("seed", range(6))
def test_restore_is_the_inverse_of_view(seed: int) -> None:
    rng = random.Random(seed)
    queue = MemoryTaskQueue(pack=False)
    keys = [key(path) for path in PATHS]
    now, held = T0, []
    for _ in range(400):
        now += rng.choice([0, 0, 1, 7, LEASE])
        _step(queue, rng, now, held)
        if rng.random() < 0.1:
            again = _rebuilt(queue, keys)
            queue.reclaim_expired(float("inf"))  # what restoring does to leases
            _same(again, queue, keys, now)
            queue = again  # and walk on with the rebuilt one (its old leases are stale)
    again = _rebuilt(queue, keys)
    queue.reclaim_expired(float("inf"))
    _same(again, queue, keys, now)
    later = now + 10**6
    assert [x.taskid for x in again.lease(100, later, LEASE)] == [
        x.taskid for x in queue.lease(100, later, LEASE)
    ]
    # New tasks go after the restored ones, in both.
    assert again.push(req("new"), now) == queue.push(req("new"), now) == PushOutcome.NEW
    assert again.seq_of(key("new")) == queue.seq_of(key("new"))


def test_restore_keeps_places_and_the_dupe_filter() -> None:
    queue = MemoryTaskQueue(pack=False)
    queue.push(req("first"), T0)
    queue.push(req("done", itag="v1"), T0)
    queue.push(req("second", priority=1), T0)
    queue.push(req("later", exetime=T0 + 30), T0)
    (second,) = queue.lease(1, T0, LEASE)  # processing when the views are taken
    _, done = queue.lease(2, T0, LEASE)
    assert queue.ack(done, T0)
    keys = [key(p) for p in ("first", "done", "second", "later")]
    again = _rebuilt(queue, keys)
    assert again.counts(T0) == FrontierCounts(ready=2, delayed=1, processing=0)
    assert [x.request.url for x in again.lease(10, T0 + 30, LEASE)] == [
        "http://example.com/second",  # priority 1, back from its lease at its place
        "http://example.com/first",
        "http://example.com/later",
    ]
    assert again.push(req("done", itag="v1"), T0 + 1) is PushOutcome.IGNORED
    assert again.push(req("done", itag="v2"), T0 + 1) is PushOutcome.RECRAWL
    assert second.taskid == req("second").taskid


def test_restore_refuses_what_it_cannot_put_back() -> None:
    queue = MemoryTaskQueue(pack=False)
    queue.push(req("a"), T0)
    view = queue.view(key("a"))
    assert view is not None
    again = MemoryTaskQueue(pack=False)
    again.restore(view)
    with pytest.raises(ValueError, match="restored twice"):
        again.restore(view)
    with pytest.raises(ValueError, match="needs its request and place"):
        MemoryTaskQueue(pack=False).restore(view._replace(request=None))
    with pytest.raises(ValueError, match="restored twice"):
        again.restore(view._replace(state=TaskState.SUCCESS, request=None))


def test_skip_seq_places_new_tasks_after_positions_the_store_keeps() -> None:
    queue = MemoryTaskQueue(pack=False)
    queue.skip_seq(41)
    queue.skip_seq(7)  # never backwards
    queue.push(req("a"), T0)
    assert queue.seq_of(key("a")) == 41


# -- stage ----------------------------------------------------------------------------------
def test_stage_prepares_exactly_the_requests_a_push_would_queue_anew() -> None:
    queue = MemoryTaskQueue(pack=False)
    queue.push(req("queued"), T0)
    queue.push(req("done"), T0)
    queue.push(req("aged", age=10), T0)
    _, done, aged = queue.lease(3, T0, LEASE)
    queue.ack(done, T0)
    queue.ack(aged, T0)
    batch = [
        req("new"),
        req("queued"),
        req("done"),
        req("done"),
        req("aged", age=10),
        req("x", taskid=req("new").taskid.upper()),
    ]
    staged = queue.stage(batch, T0 + 10, [False, False, False, True, False, False], id)
    assert [k for k, _ in staged] == [request_key(r) for r in batch]
    assert [prepared for _, prepared in staged] == [
        id(batch[0]), None, None, id(batch[3]), id(batch[4]), id(batch[5]),
    ]  # fmt: skip
    assert staged[5][0] == task_key(req("new").taskid.upper())
    assert len(queue) == 1, "staging changes nothing"


def test_stage_checks_every_request_first() -> None:
    queue = MemoryTaskQueue(pack=False)
    prepared: list[Request] = []
    with pytest.raises(InvalidURL):
        queue.stage([req("a"), Request("http://example.com:notaport/")], T0, None, prepared.append)
    with pytest.raises(TypeError, match="priority"):
        queue.stage([req("b", priority="high")], T0, None, prepared.append)
    assert len(queue) == 0
