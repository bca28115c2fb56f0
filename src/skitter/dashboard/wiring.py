"""What other packages compose from the dashboard: the one test of a loopback address
(the job server and the dashboard refuse to listen beyond 127.0.0.1 without a token by
the same rule), and the project face ``--processes`` serves the dashboard through.
"""

from skitter.dashboard._processes import ProcessesProject
from skitter.dashboard._security import is_loopback

__all__ = [
    "ProcessesProject",
    "is_loopback",
]
