"""Scheduling: which task is downloaded next, and when (SPEC §2, §3)."""

from skitter.scheduler._breaker import BreakerState, CircuitBreaker
from skitter.scheduler._fairshare import FairShare
from skitter.scheduler._retry import CRAWL_RETRY_DELAYS, SERVICE_RETRY_DELAYS, RetryPolicy
from skitter.scheduler._scheduler import ProjectScheduler
from skitter.scheduler._slots import Slot, SlotTable, slot_key
from skitter.scheduler._tokenbucket import TokenBucket

__all__ = [
    "CRAWL_RETRY_DELAYS",
    "SERVICE_RETRY_DELAYS",
    "BreakerState",
    "CircuitBreaker",
    "FairShare",
    "ProjectScheduler",
    "RetryPolicy",
    "Slot",
    "SlotTable",
    "TokenBucket",
    "slot_key",
]
