"""``plain_duplicate`` answers from the task key what ``push`` would: the repeated
link of a ready task, packed or not, is MERGED without a request to decode (a
``--processes`` coordinator decoded about a fifth of all links pushed for want of it)."""

from __future__ import annotations

import pytest

from skitter.frontier import MemoryFrontier, PushOutcome
from skitter.http import Request

NOW = 1000.0


@pytest.mark.parametrize(
    ("priority", "expected"), [(0, PushOutcome.MERGED), (-3, PushOutcome.MERGED), (1, None)]
)
async def test_a_ready_task_kept_unpacked_is_merged_from_its_key(
    priority: int, expected: PushOutcome | None
) -> None:
    frontier = MemoryFrontier()
    # Headers of its own: kept unpacked (as every request a --processes coordinator
    # decodes), where the packed ones have their own shortcut.
    page = Request("http://a.test/p", headers={"Accept": "text/html"})
    assert await frontier.push([page], NOW) == [PushOutcome.NEW]
    key = page.fingerprint
    assert frontier.plain_duplicate(key, priority, -1, NOW) == expected
    again = Request("http://a.test/p", priority=priority)
    assert await frontier.push([again], NOW) == [PushOutcome.MERGED]  # what push says
    [lease] = await frontier.lease(1, NOW, 60)
    assert lease.request.priority == max(0, priority)
    assert frontier.plain_duplicate(key, priority, -1, NOW) == PushOutcome.IGNORED  # leased
    await frontier.close()


async def test_an_odd_priority_is_left_to_push() -> None:
    frontier = MemoryFrontier()
    page = Request("http://a.test/p", headers={"Accept": "text/html"})
    await frontier.push([page], NOW)
    assert frontier.plain_duplicate(page.fingerprint, 2**60, -1, NOW) is None
    await frontier.close()
