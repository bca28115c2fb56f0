"""Scheduling: which task is downloaded next, and when."""

from skitter.extensions.wiring import AutoThrottle
from skitter.scheduler._breaker import BreakerState, CircuitBreaker
from skitter.scheduler._fairshare import FairShare
from skitter.scheduler._gate import Gate, LeasePolicy, LocalGate
from skitter.scheduler._retry import CRAWL_RETRY_DELAYS, SERVICE_RETRY_DELAYS, RetryPolicy
from skitter.scheduler._scheduler import ProjectScheduler
from skitter.scheduler._screen import Screen, scheduler_screen
from skitter.scheduler._slotqueue import SlotQueues, SlotStats
from skitter.scheduler._slots import (
    SlotPolicies,
    SlotPolicy,
    slot_by,
    slot_key,
    slot_key_function,
)
from skitter.scheduler._taskid import own_taskid
from skitter.scheduler._tokenbucket import RateLimits, TokenBucket

__all__ = [
    "CRAWL_RETRY_DELAYS",
    "SERVICE_RETRY_DELAYS",
    "AutoThrottle",
    "BreakerState",
    "CircuitBreaker",
    "FairShare",
    "Gate",
    "LeasePolicy",
    "LocalGate",
    "ProjectScheduler",
    "RateLimits",
    "RetryPolicy",
    "Screen",
    "SlotPolicies",
    "SlotPolicy",
    "SlotQueues",
    "SlotStats",
    "TokenBucket",
    "own_taskid",
    "scheduler_screen",
    "slot_by",
    "slot_key",
    "slot_key_function",
]
