"""Scheduling: which task is downloaded next, and when (SPEC §2, §3)."""

from skitter.scheduler._retry import RetryPolicy
from skitter.scheduler._scheduler import ProjectScheduler
from skitter.scheduler._slots import Slot, SlotTable, slot_key

__all__ = ["ProjectScheduler", "RetryPolicy", "Slot", "SlotTable", "slot_key"]
