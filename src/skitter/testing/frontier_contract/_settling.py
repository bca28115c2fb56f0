"""The contract's promises on how tasks end: states, recrawls, and bad input."""

from __future__ import annotations

import pytest

from skitter.exceptions import InvalidURL
from skitter.frontier import Frontier, FrontierCounts, PushOutcome, TaskState
from skitter.http import Request
from skitter.testing.frontier_contract._base import (
    LEASE,
    T0,
    ContractBase,
    lease_one,
    lease_urls,
    req,
)

__all__ = ["SettlingContract"]


class SettlingContract(ContractBase):
    """ack, nack and mark_bad; the recrawl rules; requests that cannot be queued."""

    # -- states -----------------------------------------------------------------------------
    async def test_ack_marks_success(self, frontier: Frontier) -> None:
        self.needs_crawl_times()
        await frontier.push([req("a")], T0)
        lease = await lease_one(frontier)
        assert await frontier.ack(lease, T0 + 5)
        info = await frontier.task(lease.taskid)
        assert info is not None
        assert (info.taskid, info.state, info.lastcrawltime) == (
            lease.taskid,
            TaskState.SUCCESS,
            T0 + 5,
        )

    async def test_nack_with_retry_time_delays_the_task(self, frontier: Frontier) -> None:
        await frontier.push([req("a")], T0)
        lease = await lease_one(frontier)
        taskid = lease.taskid
        assert await frontier.nack(lease, T0 + 1, T0 + 30, "HTTP 503")
        assert await frontier.counts(T0 + 1) == FrontierCounts(ready=0, delayed=1, processing=0)
        assert await frontier.next_due() == T0 + 30
        info = await frontier.task(taskid)
        assert info is not None
        assert (info.state, info.retried, info.reason) == (TaskState.ACTIVE, 1, "HTTP 503")
        assert info.url == "http://example.com/a"
        assert await frontier.lease(1, T0 + 29, LEASE) == []
        (lease,) = await frontier.lease(1, T0 + 30, LEASE)
        assert (lease.taskid, lease.retried) == (taskid, 1)
        assert await frontier.nack(lease, T0 + 31, T0 + 31, "again")
        (lease,) = await frontier.lease(1, T0 + 31, LEASE)
        assert lease.retried == 2

    async def test_nack_without_retry_time_marks_failed(self, frontier: Frontier) -> None:
        await frontier.push([req("a")], T0)
        lease = await lease_one(frontier)
        assert await frontier.nack(lease, T0 + 2, None, "DownloadTimeout")
        assert await frontier.counts(T0 + 2) == FrontierCounts(0, 0, 0)
        info = await frontier.task(lease.taskid)
        assert info is not None
        assert (info.state, info.reason, info.lastcrawltime) == (
            TaskState.FAILED,
            "DownloadTimeout",
            T0 + 2,
        )
        assert info.url == "http://example.com/a"

    async def test_mark_bad(self, frontier: Frontier) -> None:
        await frontier.push([req("a")], T0)
        lease = await lease_one(frontier)
        assert await frontier.mark_bad(lease, T0 + 3, "callback missing")
        info = await frontier.task(lease.taskid)
        assert info is not None
        assert (info.state, info.reason) == (TaskState.BAD, "callback missing")
        assert await frontier.push([req("a")], T0 + 4) == [PushOutcome.IGNORED]

    async def test_retried_survives_success(self, frontier: Frontier) -> None:
        self.needs_crawl_times()
        await frontier.push([req("a")], T0)
        lease = await lease_one(frontier)
        await frontier.nack(lease, T0, T0, "x")
        lease = await lease_one(frontier)
        await frontier.ack(lease, T0 + 1)
        info = await frontier.task(lease.taskid)
        assert info is not None
        assert (info.state, info.retried) == (TaskState.SUCCESS, 1)

    async def test_unknown_task_is_none(self, frontier: Frontier) -> None:
        assert await frontier.task("f" * 40) is None
        assert await frontier.task("no such task") is None

    # -- recrawl --------------------------------------------------------------------------
    async def _crawled(self, frontier: Frontier, request: Request, at: float = T0) -> str:
        assert await frontier.push([request], at) == [PushOutcome.NEW]
        lease = await lease_one(frontier, at)
        assert await frontier.ack(lease, at)
        return lease.taskid

    async def test_finished_task_is_ignored(self, frontier: Frontier) -> None:
        await self._crawled(frontier, req("a"))
        assert await frontier.push([req("a")], T0 + 10**6) == [PushOutcome.IGNORED]
        assert await frontier.counts(T0) == FrontierCounts(0, 0, 0)

    async def test_recrawl_when_age_has_passed(self, frontier: Frontier) -> None:
        self.needs_crawl_times()
        await self._crawled(frontier, req("a", age=100))
        assert await frontier.push([req("a", age=100)], T0 + 99) == [PushOutcome.IGNORED]
        assert await frontier.push([req("a", age=100)], T0 + 100) == [PushOutcome.RECRAWL]
        lease = await lease_one(frontier, T0 + 100)
        info = await frontier.task(lease.taskid)
        assert info is not None
        assert (info.state, info.lastcrawltime) == (TaskState.ACTIVE, T0)

    async def test_age_of_the_incoming_request_decides(self, frontier: Frontier) -> None:
        self.needs_crawl_times()
        await self._crawled(frontier, req("a", age=10**6))
        assert await frontier.push([req("a", age=5)], T0 + 5) == [PushOutcome.RECRAWL]

    async def test_recrawl_when_itag_changes(self, frontier: Frontier) -> None:
        self.needs_crawl_times()
        await self._crawled(frontier, req("a", itag="v1"))
        assert await frontier.push([req("a", itag="v1")], T0 + 1) == [PushOutcome.IGNORED]
        assert await frontier.push([req("a")], T0 + 1) == [PushOutcome.IGNORED]
        assert await frontier.push([req("a", itag="v2")], T0 + 1) == [PushOutcome.RECRAWL]
        assert await frontier.ack(await lease_one(frontier, T0 + 1), T0 + 2)
        assert await frontier.push([req("a", itag="v2")], T0 + 3) == [PushOutcome.IGNORED]

    async def test_force_always_recrawls(self, frontier: Frontier) -> None:
        await self._crawled(frontier, req("a"))
        outcomes = await frontier.push([req("a"), req("b")], T0 + 1, force=[True, False])
        assert outcomes == [PushOutcome.RECRAWL, PushOutcome.NEW]
        assert await frontier.push([req("a")], T0 + 1, force=[True]) == [PushOutcome.MERGED]

    async def test_failed_task_recrawls_by_the_same_rules(self, frontier: Frontier) -> None:
        await frontier.push([req("a")], T0)
        await frontier.nack(await lease_one(frontier), T0, None, "gone")
        assert await frontier.push([req("a")], T0 + 1) == [PushOutcome.IGNORED]
        assert await frontier.push([req("a", age=0)], T0 + 1) == [PushOutcome.RECRAWL]
        (lease,) = await frontier.lease(1, T0 + 1, LEASE)
        assert lease.retried == 0, "a recrawl starts a fresh round of attempts"

    async def test_recrawl_queues_at_the_back(self, frontier: Frontier) -> None:
        await self._crawled(frontier, req("a"))
        await frontier.push([req("b")], T0 + 1)
        await frontier.push([req("a")], T0 + 1, force=[True])
        assert await lease_urls(frontier, T0 + 1) == [
            "http://example.com/b",
            "http://example.com/a",
        ]

    async def test_auto_recrawl_queues_again_after_age(self, frontier: Frontier) -> None:
        self.needs_crawl_times()
        await self._crawled(frontier, req("a", age=3600, auto_recrawl=True), at=T0)
        assert await frontier.counts(T0) == FrontierCounts(ready=0, delayed=1, processing=0)
        assert await frontier.next_due() == T0 + 3600
        lease = await lease_one(frontier, T0 + 3600)
        info = await frontier.task(lease.taskid)
        assert info is not None
        assert (info.state, info.lastcrawltime) == (TaskState.ACTIVE, T0)
        assert await frontier.ack(lease, T0 + 3601)
        assert await frontier.next_due() == T0 + 3601 + 3600

    async def test_processing_task_is_not_queued_twice(self, frontier: Frontier) -> None:
        await frontier.push([req("a")], T0)
        lease = await lease_one(frontier)
        assert await frontier.push([req("a", priority=9)], T0) == [PushOutcome.IGNORED]
        assert await frontier.push([req("a")], T0, force=[True]) == [PushOutcome.IGNORED]
        assert await frontier.counts(T0) == FrontierCounts(0, 0, 1)
        assert await frontier.ack(lease, T0)

    # -- bad input ---------------------------------------------------------------------------
    async def test_unfingerprintable_url_changes_nothing(self, frontier: Frontier) -> None:
        bad = Request("http://example.com:notaport/x")
        with pytest.raises(InvalidURL) as caught:
            await frontier.push([req("a"), bad], T0)
        assert caught.value.request is bad
        assert await frontier.counts(T0) == FrontierCounts(0, 0, 0)

    async def test_force_must_match_requests(self, frontier: Frontier) -> None:
        with pytest.raises(ValueError, match="force"):
            await frontier.push([req("a")], T0, force=[True, False])

    async def test_many_tasks_round_trip(self, frontier: Frontier) -> None:
        requests = [req(f"n{i}", priority=i % 5) for i in range(500)]
        assert set(await frontier.push(requests, T0)) == {PushOutcome.NEW}
        seen: list[str] = []
        while leases := await frontier.lease(64, T0, LEASE):
            for lease in leases:
                assert await frontier.ack(lease, T0)
                seen.append(lease.request.url)
        assert sorted(seen) == sorted(r.url for r in requests)
        assert seen == [r.url for p in range(4, -1, -1) for r in requests if r.priority == p]
        assert await frontier.counts(T0) == FrontierCounts(0, 0, 0)
