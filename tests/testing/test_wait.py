"""wait_until: the first truthy value of a sync or async condition, or a TimeoutError that
names the condition once the bound (on the loop's time) has passed."""

from __future__ import annotations

import pytest

from skitter.testing import wait_until

pytestmark = pytest.mark.virtual_time


async def test_it_returns_the_first_truthy_value_of_an_async_condition() -> None:
    looks = iter([0, None, 7])

    async def condition() -> int | None:
        return next(looks)

    assert await wait_until(condition) == 7


async def test_a_condition_that_never_holds_times_out_with_its_name() -> None:
    def never() -> bool:
        return False

    with pytest.raises(TimeoutError, match="never still false after 2 s"):
        await wait_until(never, timeout=2)
