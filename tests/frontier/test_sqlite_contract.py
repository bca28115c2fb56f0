"""The frontier contract, run on the SQLite backend.

Twice: once as the crawl uses it (writes behind, flushed every few milliseconds) and once
flushing after every operation, so that each promise is also checked against what the
database holds when the next operation runs.
"""

from __future__ import annotations

from collections.abc import AsyncIterator
from pathlib import Path

import pytest

from skitter.frontier import Frontier
from skitter.frontier._sqlite import SqliteFrontier
from skitter.testing.frontier_contract import FailedTasksContract, FrontierContract


class TestSqliteFrontier(FrontierContract, FailedTasksContract):
    @pytest.fixture
    async def frontier(self, tmp_path: Path) -> AsyncIterator[Frontier]:
        frontier = SqliteFrontier(tmp_path / "job" / "tasks.db")
        yield frontier
        await frontier.close()


class TestSqliteFrontierFlushingEveryOperation(FrontierContract, FailedTasksContract):
    @pytest.fixture
    async def frontier(self, tmp_path: Path) -> AsyncIterator[Frontier]:
        frontier = SqliteFrontier(tmp_path / "tasks.db", flush_ops=1)
        yield frontier
        await frontier.close()
