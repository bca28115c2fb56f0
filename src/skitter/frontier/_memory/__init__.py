"""The in-memory frontier: ``MemoryTaskQueue``, its synchronous core (``_queue.py``, whose
docstring explains the layout), and ``MemoryFrontier``, its async shell.

The record layout is private. What a persistence adapter (``SqliteFrontier``) needs of
the queue is public, and is all it uses:

- **Observing.** ``queue.on_change``, when set, is called with the ``TaskKey`` of every
  task whose state changed, synchronously, inside the operation that changed it: a
  push that queued it (NEW, RECRAWL) or changed its queued entry (a merge that raised
  its priority or made it due earlier; a merge that changes nothing is not reported),
  a lease, a renewal, an ack, nack or mark_bad (and the auto-recrawl an ack may
  queue), a reclaim. A task may be reported more than once per operation. A delayed
  task becoming due is not reported: that changes no order, and a stored exetime in
  the past means due. The callback learns *which* tasks changed and must not call
  back into the queue; ``view`` says what they are now, so an adapter that writes
  behind reads each task once per write however often it changed. Unset, it costs
  one test per operation.
- **Viewing.** ``queue.view(key)`` is one task's ``TaskView`` as it stands (None if it
  was never queued); ``queue.active_keys()`` the keys of the tasks queued or
  processing, and ``queue.seq_of(key)`` one's place, cheaply. ``queue.stage(requests,
  ...)`` checks a batch and says which requests a push would queue anew (NEW or
  RECRAWL), so that a durable backend encodes exactly those before anything changes.
- **Restoring.** ``queue.restore(view)`` is ``view``'s inverse: it puts back a task read
  from storage, as it was (a lease, which dies with its process, excepted: a task that
  was processing comes back ready), without reporting it as a change.
  ``queue.skip_seq(n)`` numbers later tasks from ``n`` on, past the places a store
  keeps for tasks the queue no longer holds.

The names below are the memory package's interface to its sibling backends; users
import ``MemoryFrontier``, ``MemoryTaskQueue`` and ``TaskView`` from ``skitter.frontier``.
"""

from skitter.frontier._memory._frontier import MemoryFrontier
from skitter.frontier._memory._queue import MemoryTaskQueue
from skitter.frontier._memory._task import (
    TaskKey,
    TaskView,
    check_request,
    priority_of,
    request_key,
    task_key,
    taskid_of,
)

__all__ = [
    "MemoryFrontier",
    "MemoryTaskQueue",
    "TaskKey",
    "TaskView",
    "check_request",
    "priority_of",
    "request_key",
    "task_key",
    "taskid_of",
]
