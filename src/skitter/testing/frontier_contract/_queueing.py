"""The contract's queueing promises: one entry per taskid (merges), order, delayed tasks."""

from __future__ import annotations

from skitter.frontier import Frontier, FrontierCounts, PushOutcome
from skitter.http import Request
from skitter.testing.frontier_contract._base import (
    LEASE,
    T0,
    ContractBase,
    lease_one,
    lease_urls,
    req,
)

__all__ = ["QueueingContract"]


class QueueingContract(ContractBase):
    """Push, merge, priority and FIFO order, delayed tasks."""

    # -- push and one entry per taskid ------------------------------------------------------
    async def test_push_returns_one_outcome_per_request(self, frontier: Frontier) -> None:
        outcomes = await frontier.push([req("a"), req("b"), req("a")], T0)
        assert outcomes == [PushOutcome.NEW, PushOutcome.NEW, PushOutcome.MERGED]
        assert await frontier.counts(T0) == FrontierCounts(ready=2, delayed=0, processing=0)

    async def test_queued_taskid_is_merged_not_duplicated(self, frontier: Frontier) -> None:
        await frontier.push([req("a")], T0)
        assert await frontier.push([req("a")], T0) == [PushOutcome.MERGED]
        assert await frontier.push([req("a#fragment")], T0) == [PushOutcome.MERGED]
        assert await lease_urls(frontier) == ["http://example.com/a"]
        assert await lease_urls(frontier) == []

    async def test_explicit_taskid_is_the_key(self, frontier: Frontier) -> None:
        outcomes = await frontier.push([req("a", taskid="t1"), req("b", taskid="t1")], T0)
        assert outcomes == [PushOutcome.NEW, PushOutcome.MERGED]
        leases = await frontier.lease(10, T0, LEASE)
        assert [(lease.taskid, lease.request.url) for lease in leases] == [
            ("t1", "http://example.com/a")
        ]

    async def test_taskid_defaults_to_the_fingerprint(self, frontier: Frontier) -> None:
        request = req("a?y=2&x=1")
        await frontier.push([request], T0)
        (lease,) = await frontier.lease(1, T0, LEASE)
        assert lease.taskid == request.fingerprint.hex()
        assert await frontier.push([req("a", taskid=lease.taskid)], T0) == [PushOutcome.IGNORED]

    async def test_merge_keeps_the_higher_priority(self, frontier: Frontier) -> None:
        await frontier.push([req("a", priority=1), req("b", priority=2)], T0)
        assert await frontier.push([req("a", priority=5)], T0) == [PushOutcome.MERGED]
        assert await lease_urls(frontier) == ["http://example.com/a", "http://example.com/b"]

    async def test_merge_never_lowers_priority(self, frontier: Frontier) -> None:
        await frontier.push([req("a", priority=5), req("b", priority=2)], T0)
        await frontier.push([req("a", priority=0)], T0)
        assert await lease_urls(frontier) == ["http://example.com/a", "http://example.com/b"]

    async def test_merge_keeps_the_earlier_exetime(self, frontier: Frontier) -> None:
        await frontier.push([req("a", exetime=T0 + 100)], T0)
        await frontier.push([req("a", exetime=T0 + 10)], T0)
        await frontier.push([req("a", exetime=T0 + 50)], T0)
        assert await frontier.next_due() == T0 + 10
        assert await lease_urls(frontier, T0 + 9) == []
        assert await lease_urls(frontier, T0 + 10) == ["http://example.com/a"]
        assert await lease_urls(frontier, T0 + 100) == []

    async def test_a_retry_keeps_its_time_when_the_task_is_pushed_again(
        self, frontier: Frontier
    ) -> None:
        await frontier.push([req("a")], T0)
        lease = await lease_one(frontier)
        assert await frontier.nack(lease, T0 + 1, T0 + 100, "HTTP 500")
        await frontier.push([req("a")], T0 + 2)  # another page links to it again
        assert await frontier.counts(T0 + 2) == FrontierCounts(ready=0, delayed=1, processing=0)
        assert await lease_urls(frontier, T0 + 50) == []
        assert await lease_urls(frontier, T0 + 100) == ["http://example.com/a"]

    async def test_merge_can_make_a_delayed_task_due(self, frontier: Frontier) -> None:
        await frontier.push([req("a", exetime=T0 + 100)], T0)
        await frontier.push([req("a")], T0)
        assert await frontier.counts(T0) == FrontierCounts(ready=1, delayed=0, processing=0)
        assert await lease_urls(frontier) == ["http://example.com/a"]

    async def test_merge_keeps_the_first_place_in_fifo(self, frontier: Frontier) -> None:
        await frontier.push([req("a"), req("b"), req("c")], T0)
        await frontier.push([req("a")], T0)
        assert await lease_urls(frontier) == [f"http://example.com/{p}" for p in "abc"]

    # -- order ------------------------------------------------------------------------------
    async def test_higher_priority_first(self, frontier: Frontier) -> None:
        await frontier.push([req(str(p), priority=p) for p in (0, 3, -2, 7, 1)], T0)
        assert await lease_urls(frontier) == [f"http://example.com/{p}" for p in (7, 3, 1, 0, -2)]

    async def test_strict_fifo_within_a_priority(self, frontier: Frontier) -> None:
        requests = [req(f"p{i}", priority=i % 3) for i in range(60)]
        for chunk in range(0, 60, 7):  # several pushes keep one global order
            await frontier.push(requests[chunk : chunk + 7], T0)
        urls = await lease_urls(frontier)
        expected = [r.url for p in (2, 1, 0) for r in requests if r.priority == p]
        assert urls == expected

    async def test_lease_respects_the_limit(self, frontier: Frontier) -> None:
        await frontier.push([req(str(i)) for i in range(5)], T0)
        assert len(await frontier.lease(2, T0, LEASE)) == 2
        assert len(await frontier.lease(0, T0, LEASE)) == 0
        assert len(await frontier.lease(10, T0, LEASE)) == 3
        assert await frontier.lease(10, T0, LEASE) == []

    async def test_leased_request_keeps_its_fields(self, frontier: Frontier) -> None:
        request = Request("http://example.com/form", method="POST", body=b"q=1", priority=4)
        await frontier.push([request], T0)
        (lease,) = await frontier.lease(1, T0, LEASE)
        assert (lease.request.url, lease.request.method, lease.request.body) == (
            "http://example.com/form",
            "POST",
            b"q=1",
        )
        assert lease.request.priority == 4
        assert lease.retried == 0
        assert lease.deadline == T0 + LEASE

    # -- delayed tasks -------------------------------------------------------------------
    async def test_delayed_task_waits_for_its_exetime(self, frontier: Frontier) -> None:
        await frontier.push([req("later", exetime=T0 + 30), req("now")], T0)
        assert await frontier.counts(T0) == FrontierCounts(ready=1, delayed=1, processing=0)
        assert await frontier.next_due() == T0 + 30
        assert await lease_urls(frontier, T0 + 29.9) == ["http://example.com/now"]
        assert await frontier.counts(T0 + 30) == FrontierCounts(ready=1, delayed=0, processing=1)
        assert await lease_urls(frontier, T0 + 30) == ["http://example.com/later"]
        assert await frontier.next_due() is None

    async def test_past_exetime_is_due_now(self, frontier: Frontier) -> None:
        await frontier.push([req("a", exetime=T0 - 100), req("b", exetime=0)], T0)
        assert await frontier.counts(T0) == FrontierCounts(ready=2, delayed=0, processing=0)
        assert await frontier.next_due() is None

    async def test_due_tasks_are_ordered_by_priority(self, frontier: Frontier) -> None:
        await frontier.push(
            [
                req("d1", exetime=T0 + 5, priority=1),
                req("d2", exetime=T0 + 1, priority=0),
                req("r", priority=0),
                req("d3", exetime=T0 + 3, priority=2),
            ],
            T0,
        )
        urls = await lease_urls(frontier, T0 + 10)
        assert urls == [f"http://example.com/{p}" for p in ("d3", "d1", "d2", "r")]
