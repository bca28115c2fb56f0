"""What other packages compose from the scheduler: the outcome a finished task is
recorded with (``DONE``, for the engine and the dashboard) and the host slot key (the
multiprocess coordinator routes by it).
"""

from skitter.scheduler._scheduler import DONE
from skitter.scheduler._slots import netloc_slot_key

__all__ = [
    "DONE",
    "netloc_slot_key",
]
