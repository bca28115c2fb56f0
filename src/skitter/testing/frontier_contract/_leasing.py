"""The contract's lease promises: processing until settled, reclaim, fencing by lease, renewal."""

from __future__ import annotations

from skitter.frontier import Frontier, FrontierCounts, Lease, PushOutcome, TaskState
from skitter.http import Request
from skitter.testing.frontier_contract._base import (
    LEASE,
    T0,
    ContractBase,
    lease_one,
    req,
)

__all__ = ["LeasingContract"]


class LeasingContract(ContractBase):
    """Leases, their expiry and reclaim, and fencing of stale attempts."""

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
            fresh = Request(stale.request.url)
            assert await frontier.push([fresh], now, force=[True]) == [PushOutcome.RECRAWL]

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
