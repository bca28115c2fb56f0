"""``FailedTasksContract``: listing FAILED and BAD tasks and queueing them again."""

from __future__ import annotations

import pytest

from skitter.frontier import Frontier, TaskState
from skitter.http import Request
from skitter.testing.frontier_contract._base import LEASE, T0

__all__ = ["FailedTasksContract"]


class FailedTasksContract:
    """``tasks()``, ``retry_failed()`` and ``requeue_bad()``: mixed into a backend's
    contract test class once the backend implements them (they are the UI's and
    ``skitter job``'s)."""

    @pytest.fixture
    async def frontier(self) -> Frontier:
        raise NotImplementedError("override the frontier fixture with a fresh backend")

    async def test_failed_tasks_are_listed_with_reasons_and_retried_by_filter(
        self, frontier: Frontier
    ) -> None:
        urls = ["http://a.example/1", "http://b.example/2", "http://sub.a.example/3"]
        await frontier.push([Request(u) for u in urls], T0)
        leases = await frontier.lease(10, T0, LEASE)
        reasons = {
            "http://a.example/1": "HTTP 500",
            "http://b.example/2": "ConnectError: refused",
            "http://sub.a.example/3": "HTTP 503",
        }
        for lease in leases:
            await frontier.nack(lease, T0 + 1, None, reasons[lease.request.url])
        failed = await frontier.tasks(TaskState.FAILED)
        assert {(t.url, t.reason) for t in failed} == set(reasons.items())
        assert await frontier.retry_failed(T0 + 2, reason="Connect") == 1
        assert await frontier.retry_failed(T0 + 2, domain="a.example") == 2
        assert await frontier.retry_failed(T0 + 2) == 0
        assert await frontier.tasks(TaskState.FAILED) == []
        again = await frontier.lease(10, T0 + 3, LEASE)
        assert sorted(lease.request.url for lease in again) == sorted(urls)
        assert all(lease.retried == 0 for lease in again)

    async def test_bad_tasks_are_queued_again_by_filter_and_failed_ones_are_not(
        self, frontier: Frontier
    ) -> None:
        urls = ["http://a.example/1", "http://b.example/2", "http://sub.a.example/3"]
        await frontier.push([Request(u) for u in [*urls, "http://c.example/failed"]], T0)
        reasons = {
            "http://a.example/1": "UnknownCallback: 'parse_item' is not a method",
            "http://b.example/2": "stored request of unknown format version 2",
            "http://sub.a.example/3": "ignored: forbidden by robots.txt",
        }
        for lease in await frontier.lease(10, T0, LEASE):
            if lease.request.url in reasons:
                assert await frontier.mark_bad(lease, T0 + 1, reasons[lease.request.url])
            else:
                assert await frontier.nack(lease, T0 + 1, None, "HTTP 500")
        bad = await frontier.tasks(TaskState.BAD)
        assert {(t.url, t.reason) for t in bad} == set(reasons.items())
        assert await frontier.requeue_bad(T0 + 2, reason="HTTP 500") == 0, "FAILED is not BAD"
        assert await frontier.requeue_bad(T0 + 2, reason="format version") == 1
        assert await frontier.requeue_bad(T0 + 2, domain="a.example") == 2
        assert await frontier.requeue_bad(T0 + 2) == 0
        assert await frontier.tasks(TaskState.BAD) == []
        assert [t.url for t in await frontier.tasks(TaskState.FAILED)] == [
            "http://c.example/failed"
        ]
        again = await frontier.lease(10, T0 + 3, LEASE)
        assert sorted(lease.request.url for lease in again) == sorted(urls)
        assert all(lease.retried == 0 for lease in again)
        for lease in again:
            assert await frontier.ack(lease, T0 + 4)
