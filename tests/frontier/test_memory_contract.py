"""The frontier contract, run on the in-memory backend."""

from __future__ import annotations

from collections.abc import AsyncIterator

import pytest

from skitter.frontier import Frontier, MemoryFrontier
from skitter.testing.frontier_contract import FailedTasksContract, FrontierContract


class TestMemoryFrontier(FrontierContract, FailedTasksContract):
    @pytest.fixture
    async def frontier(self) -> AsyncIterator[Frontier]:
        frontier = MemoryFrontier()
        yield frontier
        await frontier.close()
