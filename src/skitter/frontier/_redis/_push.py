"""What one push sends to Redis, and which links need not be sent at all.

``push_row`` checks a request and turns it into the row ``push.lua`` reads (a bad request
raises before anything is sent, so a batch changes nothing or all). ``PushCache`` is the
worker-side memory of what it already pushed: pages link to the same pages over and
over, and a link this worker pushed before, with no higher priority nor earlier exetime
than then, cannot change what Redis holds (merges only raise the priority and bring the
exetime forward; a finished task with ``age`` -1 is never recrawled).
"""

from __future__ import annotations

import itertools
import math
from collections.abc import Iterable
from typing import Any

from skitter._secrets import mask_page_url
from skitter.frontier._memory import check_request
from skitter.http import Request

__all__ = ["PushCache", "push_row"]

_MAX_PRIORITY = 2**53  # Lua numbers are doubles: larger priorities would lose their order


def push_row(request: Request, force: bool) -> list[Any]:
    """The row of ``request`` in a push batch (``lua/push.lua`` names the fields)."""
    check_request(request)
    priority = int(request.priority)
    if not -_MAX_PRIORITY < priority < _MAX_PRIORITY:
        raise ValueError(f"priority of {request!r} is out of range: {priority}")
    if not (math.isfinite(request.exetime) and math.isfinite(request.age)):
        raise ValueError(f"exetime and age of {request!r} must be finite numbers")
    return [
        request.taskid,
        priority,
        float(request.exetime),
        request.itag if request.itag is not None else False,
        float(request.age),
        bool(request.auto_recrawl),
        force,
        mask_page_url(request.url),
    ]


def _never_recrawls(request: Request) -> bool:
    """Once pushed, pushing it again changes nothing unless its priority or exetime
    does: no ``age`` to expire, no ``itag`` to change, no auto-recrawl."""
    return request.age < 0 and request.itag is None and not request.auto_recrawl


class PushCache:
    """The taskids this worker pushed, with the highest priority and earliest exetime
    of each, the least recently used forgotten first (``size`` of them at most)."""

    def __init__(self, size: int) -> None:
        if size < 0:
            raise ValueError(f"push_cache must be >= 0, got {size!r}")
        self.size = size
        self._pushed: dict[str, tuple[int, float]] = {}

    def __bool__(self) -> bool:
        return self.size > 0

    def covers(self, request: Request) -> bool:
        """True if sending ``request`` could not change what Redis holds (and mark it
        recently used). Requests that can recrawl are never covered."""
        known = self._pushed.get(request.taskid)
        if (
            known is not None
            and int(request.priority) <= known[0]
            and request.exetime >= known[1]
            and _never_recrawls(request)
        ):
            self._pushed[request.taskid] = self._pushed.pop(request.taskid)
            return True
        return False

    def remember(self, requests: Iterable[Request]) -> None:
        """Note what Redis now holds for these taskids; the least recently used tenth
        is forgotten when the cache is full."""
        pushed = self._pushed
        for request in requests:
            if not _never_recrawls(request):
                continue
            taskid, priority, exetime = request.taskid, int(request.priority), request.exetime
            known = pushed.pop(taskid, None)
            if known is not None:
                priority, exetime = max(priority, known[0]), min(exetime, known[1])
            pushed[taskid] = (priority, exetime)
        if len(pushed) > self.size:
            for taskid in list(itertools.islice(pushed, len(pushed) - self.size * 9 // 10)):
                del pushed[taskid]

    def clear(self) -> None:
        self._pushed.clear()
