"""One crawl on several processes of one machine, without a server: ``skitter crawl
--processes N``. The parent is the ``Coordinator`` (the job's frontier and feeds,
served over a Unix socket); each child runs a ``WorkerCrawler``, whose frontier is a
``RemoteFrontier``. Redis workers (``skitter worker``) remain the way across machines.
"""

from skitter.multiproc._coordinator import Coordinator
from skitter.multiproc._service import FrontierService, owner_of
from skitter.multiproc._shares import merge_stats
from skitter.multiproc._worker import WorkerCrawler, run_worker

__all__ = [
    "Coordinator",
    "FrontierService",
    "WorkerCrawler",
    "merge_stats",
    "owner_of",
    "run_worker",
]
