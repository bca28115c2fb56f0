"""The start feeder on its own: resume offsets, dont_filter taskids from the position,
and a ``FeedClaim`` that lapses and comes back (the cluster's claim, faked in memory)."""

from __future__ import annotations

from typing import Any

from skitter import Crawler, Request, Spider
from skitter.engine._feeder import FeedClaim, StartFeeder
from skitter.engine._project import Project
from skitter.exceptions import FrontierUnavailable

URLS = [f"http://a.example/{n}" for n in range(6)]


class Starts(Spider):
    name = "starts"

    def start_requests(self) -> Any:
        for url in URLS:
            yield Request(url, dont_filter=url.endswith("/1"))


class Fed:
    def __init__(self, project: Project, low_water: int = 1000, claim: FeedClaim | None = None):
        self.urls: list[str] = []
        self.taskids: dict[str, str] = {}
        self.outages: list[FrontierUnavailable] = []
        self.feeder = StartFeeder(
            project,
            enqueue=self.enqueue,
            bad_output=lambda project, obj, where: None,
            store_unavailable=self.outages.append,
            low_water=low_water,
            claim=claim,
        )

    async def enqueue(self, project: Project, requests: list[Request]) -> None:
        for request in requests:
            self.urls.append(request.url)
            self.taskids[request.url] = request.taskid


class Claim:
    """Grants turns from a script of offsets; ``lose_at`` makes a progress fail once."""

    renew_every = 60.0

    def __init__(self, turns: list[int | None], lose_at: int | None = None) -> None:
        self.turns = turns
        self.lose_at = lose_at
        self.calls: list[tuple[str, int | None]] = []

    async def wait_turn(self) -> int | None:
        offset = self.turns.pop(0)
        self.calls.append(("turn", offset))
        return offset

    async def progress(self, offset: int) -> bool:
        self.calls.append(("progress", offset))
        if offset == self.lose_at:
            self.lose_at = None
            return False
        return True

    async def finished(self, offset: int) -> bool:
        self.calls.append(("finished", offset))
        return True


def project() -> Project:
    return Crawler(Starts).build()


async def test_feeds_every_start_request_and_says_when_exhausted() -> None:
    p = project()
    fed = Fed(p)
    assert await fed.feeder.run()
    assert fed.urls == URLS
    assert (p.start_offset, p.start_exhausted) == (6, True)
    fingerprint = Request(URLS[1]).fingerprint.hex()
    assert fed.taskids[URLS[1]] == f"{fingerprint}-s1"  # own_taskid, tagged by position
    assert not await Fed(p).feeder.run(), "already exhausted: nothing to do"


async def test_a_resumed_project_skips_what_it_had_queued() -> None:
    p = project()
    p.start_offset = 4
    fed = Fed(p)
    assert await fed.feeder.run()
    assert fed.urls == URLS[4:]


async def test_a_closing_project_stops_feeding_without_being_exhausted() -> None:
    p = project()
    p.request_close("shutdown")
    fed = Fed(p)
    assert not await fed.feeder.run()
    assert (fed.urls, p.start_exhausted) == ([], False)


async def test_a_lapsed_claim_waits_for_a_turn_and_goes_on_from_its_offset() -> None:
    p = project()
    claim = Claim(turns=[0, 4], lose_at=2)  # lost after 2; another worker queued 2 and 3
    fed = Fed(p, claim=claim)
    assert await fed.feeder.run()
    assert fed.urls == [URLS[0], URLS[1], URLS[4], URLS[5]]
    assert claim.calls == [
        ("turn", 0),
        ("progress", 1),
        ("progress", 2),
        ("turn", 4),
        ("progress", 5),
        ("progress", 6),
        ("finished", 6),
    ]
    assert p.start_exhausted


async def test_another_worker_having_queued_them_all_ends_the_feed() -> None:
    p = project()
    fed = Fed(p, claim=Claim(turns=[None]))
    assert await fed.feeder.run()
    assert fed.urls == []
    assert p.start_exhausted
