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
a ``conftest.py`` should call ``pytest.register_assert_rewrite`` with this package's name
before it is imported (its modules are rewritten with it). The promises are grouped by
theme: queueing, leasing and settling, each a mixin of ``FrontierContract``.
"""

from __future__ import annotations

from skitter.testing.frontier_contract._failed import FailedTasksContract
from skitter.testing.frontier_contract._leasing import LeasingContract
from skitter.testing.frontier_contract._queueing import QueueingContract
from skitter.testing.frontier_contract._settling import SettlingContract

__all__ = ["FailedTasksContract", "FrontierContract"]


class FrontierContract(QueueingContract, LeasingContract, SettlingContract):
    """The promises of ``Frontier``, checked against the backend of ``frontier``.

    ``keeps_crawl_times = False`` declares a backend whose dupe filter keeps membership
    only (the Redis frontier's Bloom filter): no lastcrawltime nor itag per finished task,
    so the recrawl rules that need them are skipped, with that reason.
    """
