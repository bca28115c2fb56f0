"""What every part of the contract suite shares: times, request helpers, and the base
class that declares the ``frontier`` fixture and what the backend keeps."""

from __future__ import annotations

from typing import ClassVar

import pytest

from skitter.frontier import Frontier, Lease
from skitter.http import Request

__all__ = ["LEASE", "T0", "ContractBase", "lease_one", "lease_urls", "req"]

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


class ContractBase:
    """``keeps_crawl_times = False`` declares a backend whose dupe filter keeps membership
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
