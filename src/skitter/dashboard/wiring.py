"""What the job server shares with the dashboard: the one test of a loopback address,
so both refuse to listen beyond 127.0.0.1 without a token by the same rule.
"""

from skitter.dashboard._security import is_loopback

__all__ = [
    "is_loopback",
]
