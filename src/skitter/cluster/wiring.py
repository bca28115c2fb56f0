"""What the multiprocess workers compose from the cluster package: the heartbeat a
worker reports, built the same way a Redis worker's is.
"""

from skitter.cluster._presence import heartbeat_of

__all__ = [
    "heartbeat_of",
]
