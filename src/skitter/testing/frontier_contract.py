"""The frontier contract as a reusable pytest suite (``skitter.frontier._base``).

Every backend runs the same tests. Subclass ``FrontierContract`` in a test module
named ``Test...`` and override the ``frontier`` fixture to yield a fresh, empty
frontier (and close it afterwards)::

    class TestSqliteFrontier(FrontierContract):
        @pytest.fixture
        async def frontier(self, tmp_path):
            frontier = SqliteFrontier(tmp_path / "tasks.db")
            yield frontier
            await frontier.close()

Times are plain numbers passed as ``now``; no test sleeps. Each test checks one promise
of the ``Frontier`` docstring, named after it. For pytest's detailed assertion messages,
a ``conftest.py`` should call ``pytest.register_assert_rewrite`` with this module's name
before it is imported.
"""

from __future__ import annotations

from typing import ClassVar

import pytest

from skitter.exceptions import InvalidURL
from skitter.frontier import Frontier, FrontierCounts, Lease, PushOutcome, TaskState
from skitter.http import Request

__all__ = ["FailedTasksContract", "FrontierContract"]

T0 = 1_700_000_000.0
LEASE = 60.0


def req(path: str, **kwargs: object) -> Request:
    return Request(f"http://example.com/{path}", **kwargs)  # type: ignore[arg-type]


async def lease_urls(frontier: Frontier, now: float = T0, limit: int = 1000) -> list[str]:
    return [lease.request.url for lease in await frontier.lease(limit, now, LEASE)]


async def lease_one(frontier: Frontier, now: float = T0, owner: str = "") -> Lease:
    leases = await frontier.lease(1, now, LEASE, owner)
    assert len(leases) == 1, f"expected one due task at {now}, got {leases}"
    return leases[0]


class FrontierContract:
    """The promises of ``Frontier``, checked against the backend of ``frontier``.

    ``keeps_crawl_times = False`` declares a backend whose dupe filter keeps membership
    only (the Redis frontier's Bloom filter): no lastcrawltime nor itag per finished task,
    so the recrawl rules that need them are skipped, with that reason.
    """

    keeps_crawl_times: ClassVar[bool] = True

    def needs_crawl_times(self) -> None:
        if not self.keeps_crawl_times:
            pytest.skip("this dupe filter keeps no crawl times or itags (by design)")

    @pytest.fixture
    async def frontier(self) -> Frontier:
        raise NotImplementedError("override the frontier fixture with a fresh backend")

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

    # -- leases -------------------------------------------------------------------------
    async def test_leased_task_is_processing_until_acked(self, frontier: Frontier) -> None:
        await frontier.push([req("a")], T0)
        lease = await lease_one(frontier)
        assert await frontier.counts(T0) == FrontierCounts(ready=0, delayed=0, processing=1)
        assert await frontier.lease(10, T0, LEASE) == []
        info = await frontier.task(lease.taskid)
        assert info is not None
        assert info.state is TaskState.ACTIVE
        assert await frontier.ack(lease, T0 + 1)
        assert await frontier.counts(T0) == FrontierCounts(ready=0, delayed=0, processing=0)

    async def test_expired_lease_is_reclaimed(self, frontier: Frontier) -> None:
        await frontier.push([req("a"), req("b")], T0)
        lease = await lease_one(frontier)
        assert await frontier.reclaim_expired(T0 + LEASE - 1) == 0
        assert await frontier.reclaim_expired(T0 + LEASE) == 1
        assert await frontier.counts(T0 + LEASE) == FrontierCounts(2, 0, 0)
        # It keeps its place: still ahead of b, and no attempt is counted as failed.
        leases = await frontier.lease(10, T0 + LEASE, LEASE)
        assert leases[0].taskid == lease.taskid
        assert leases[0].retried == 0

    async def test_a_reclaimed_lease_is_refused(self, frontier: Frontier) -> None:
        await frontier.push([req("a")], T0)
        old = await lease_one(frontier, owner="w1")
        await frontier.reclaim_expired(T0 + LEASE)
        assert not await frontier.ack(old, T0 + LEASE)
        new = await lease_one(frontier, T0 + LEASE, owner="w2")
        assert new.taskid == old.taskid
        assert not await frontier.ack(old, T0 + LEASE)
        assert not await frontier.nack(old, T0 + LEASE, T0 + 99, "x")
        assert not await frontier.mark_bad(old, T0 + LEASE, "x")
        assert await frontier.renew([old], T0 + LEASE, LEASE) == 0
        assert await frontier.ack(new, T0 + LEASE)

    async def test_a_stale_attempt_by_the_same_owner_cannot_settle_the_new_one(
        self, frontier: Frontier
    ) -> None:
        await frontier.push([req("a"), req("b")], T0)
        now = T0
        for settle in ("ack", "nack", "retry", "bad"):
            stale = await lease_one(frontier, now, owner="w")
            now = stale.deadline
            assert await frontier.reclaim_expired(now) == 1
            current = await lease_one(frontier, now, owner="w")
            assert current.taskid == stale.taskid and current is not stale
            now += 1
            assert await frontier.renew([stale], now, LEASE) == 0
            refused = {
                "ack": frontier.ack(stale, now),
                "nack": frontier.nack(stale, now, None, "stale"),
                "retry": frontier.nack(stale, now, now + 5, "stale"),
                "bad": frontier.mark_bad(stale, now, "stale"),
            }
            for name, call in refused.items():
                assert not await call, f"{settle}: a stale {name} was accepted"
            assert await frontier.counts(now) == FrontierCounts(1, 0, 1)
            info = await frontier.task(current.taskid)
            assert info is not None and (info.state, info.retried) == (TaskState.ACTIVE, 0)
            assert await frontier.renew([current], now, LEASE) == 1
            assert current.deadline == now + LEASE
            # The current attempt is untouched: it settles as it likes.
            if settle == "ack":
                assert await frontier.ack(current, now)
            elif settle == "nack":
                assert await frontier.nack(current, now, None, "gone")
            elif settle == "retry":
                assert await frontier.nack(current, now, now, "again")
                again = await lease_one(frontier, now)
                assert (again.taskid, again.retried) == (current.taskid, 1)
                assert await frontier.ack(again, now)
            else:
                assert await frontier.mark_bad(current, now, "forbidden")
            again = Request(stale.request.url)
            assert await frontier.push([again], now, force=[True]) == [PushOutcome.RECRAWL]

    async def test_expired_but_unreclaimed_lease_is_current(self, frontier: Frontier) -> None:
        await frontier.push([req("a")], T0)
        lease = await lease_one(frontier, owner="w1")
        assert await frontier.ack(lease, T0 + 10 * LEASE)

    async def test_a_lease_that_is_over_is_refused(self, frontier: Frontier) -> None:
        await frontier.push([req("a")], T0)
        made_up = Lease(req("a").taskid, req("a"), 0, T0 + LEASE)
        assert not await frontier.ack(made_up, T0), "a queued task has no lease to ack"
        assert not await frontier.nack(made_up, T0, None, "x")
        lease = await lease_one(frontier)
        assert not await frontier.ack(made_up, T0), "only the lease handed out is current"
        assert await frontier.ack(lease, T0)
        assert not await frontier.ack(lease, T0)
        assert not await frontier.nack(lease, T0, None, "x")

    async def test_renew_extends_current_leases(self, frontier: Frontier) -> None:
        await frontier.push([req("a"), req("b")], T0)
        a = await lease_one(frontier, owner="w")
        b = await lease_one(frontier, owner="w")
        assert await frontier.renew([a], T0 + 50, LEASE) == 1
        assert a.deadline == T0 + 50 + LEASE
        assert await frontier.reclaim_expired(T0 + LEASE) == 1  # b only
        assert await frontier.reclaim_expired(T0 + 50 + LEASE - 1) == 0
        assert await frontier.ack(a, T0 + 50 + LEASE - 1)
        assert not await frontier.ack(b, T0 + LEASE)

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
