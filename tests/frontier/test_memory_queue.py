"""What the memory core does beyond the shared contract: keys, bad input, upkeep."""

from __future__ import annotations

import pytest

from skitter.frontier import MemoryFrontier, MemoryTaskQueue, PushOutcome, TaskState
from skitter.frontier._memory import task_key
from skitter.http import Request

T0 = 1_700_000_000.0


def test_explicit_hex_taskid_meets_the_fingerprint() -> None:
    queue = MemoryTaskQueue()
    request = Request("http://example.com/a")
    assert queue.push(request, T0) is PushOutcome.NEW
    twin = Request("http://example.com/other", taskid=request.fingerprint.hex())
    assert queue.push(twin, T0) is PushOutcome.MERGED
    upper = Request("http://example.com/other", taskid=request.fingerprint.hex().upper())
    assert queue.push(upper, T0) is PushOutcome.NEW, "taskids are compared as strings"
    assert len(queue) == 2


def test_task_key_is_compact_for_sha1_hex_only() -> None:
    hexid = "ab" * 20
    assert task_key(hexid) == bytes.fromhex(hexid)
    assert task_key(hexid.upper()) == hexid.upper()
    assert task_key("z" * 40) == "z" * 40
    assert task_key("job-1") == "job-1"


def test_merge_writes_the_priority_on_the_kept_request() -> None:
    queue = MemoryTaskQueue(pack=False)
    first = Request("http://example.com/a", priority=1)
    queue.push(first, T0)
    queue.push(Request("http://example.com/a", priority=7), T0)
    (lease,) = queue.lease(1, T0, 60)
    assert lease.request is first
    assert first.priority == 7


def test_merge_raises_the_priority_of_a_packed_request() -> None:
    queue = MemoryTaskQueue()
    queue.push(Request("http://example.com/a", priority=1), T0)
    queue.push(Request("http://example.com/b", priority=5), T0)
    queue.push(Request("http://example.com/a", priority=7), T0)
    queue.push(Request("http://example.com/a", priority=3), T0)  # lower: changes nothing
    leased = queue.lease(2, T0, 60)
    assert [(lease.request.url, lease.request.priority) for lease in leased] == [
        ("http://example.com/a", 7),
        ("http://example.com/b", 5),
    ]


def test_integral_float_priority_is_accepted() -> None:
    queue = MemoryTaskQueue()
    queue.push(Request("http://example.com/a", priority=2.0), T0)  # type: ignore[arg-type]
    queue.push(Request("http://example.com/b", priority=3), T0)
    assert [lease.request.url[-1] for lease in queue.lease(2, T0, 60)] == ["b", "a"]


@pytest.mark.parametrize(
    ("field", "value", "error"),
    [("priority", 0.5, TypeError), ("exetime", None, TypeError), ("age", "1d", TypeError)],
)
async def test_bad_fields_name_the_request_and_change_nothing(
    field: str, value: object, error: type[Exception]
) -> None:
    frontier = MemoryFrontier()
    bad = Request("http://example.com/bad")
    setattr(bad, field, value)
    with pytest.raises(error, match=r"<GET http://example.com/bad>"):
        await frontier.push([Request("http://example.com/ok"), bad], T0)
    assert len(frontier.queue) == 0


def test_merges_do_not_grow_the_heaps_without_bound() -> None:
    queue = MemoryTaskQueue()
    for priority in range(5000):  # every merge raises the priority: a dead entry each
        queue.push(Request("http://example.com/a", priority=priority), T0)
    assert len(queue._ready) < 2100  # swept, not 5000 (white box: entries held)
    assert [lease.request.priority for lease in queue.lease(5, T0, 60)] == [4999]


def test_finished_leases_do_not_pile_up() -> None:
    queue = MemoryTaskQueue()
    for i in range(5000):
        queue.push(Request(f"http://example.com/{i}"), T0)
        (lease,) = queue.lease(1, T0, 3600)
        assert queue.ack(lease, T0)
    assert len(queue._processing.entries) < 2100  # dead lease entries swept (white box)
    assert queue.reclaim_expired(T0 + 3600) == 0


def test_renewals_do_not_pile_up() -> None:
    queue = MemoryTaskQueue()
    queue.push(Request("http://example.com/a"), T0)
    (lease,) = queue.lease(1, T0, 60)
    for i in range(5000):
        assert queue.renew([lease], T0 + i, 60) == 1
    assert len(queue._processing.entries) < 2100
    assert queue.reclaim_expired(T0 + 5000 + 58) == 0
    assert queue.reclaim_expired(T0 + 5000 + 59) == 1


def test_succeeded_task_is_remembered_without_its_url() -> None:
    queue = MemoryTaskQueue()
    queue.push(Request("http://example.com/a"), T0)
    (lease,) = queue.lease(1, T0, 60)
    queue.ack(lease, T0 + 1)
    info = queue.task(lease.taskid)
    assert info is not None
    assert (info.state, info.url, info.lastcrawltime) == (TaskState.SUCCESS, "", T0 + 1)


def test_auto_recrawl_keeps_the_merged_priority() -> None:
    queue = MemoryTaskQueue()
    queue.push(Request("http://example.com/a", age=10, auto_recrawl=True, priority=1), T0)
    queue.push(Request("http://example.com/a", priority=5), T0)
    queue.push(Request("http://example.com/b", priority=3, exetime=T0 + 10), T0)
    (lease,) = queue.lease(1, T0, 60)
    queue.ack(lease, T0)
    assert [le.request.url[-1] for le in queue.lease(2, T0 + 10, 60)] == ["a", "b"]
