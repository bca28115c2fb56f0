"""What the memory queue remembers of finished tasks: the dupe filter and its recrawl
rule, the listing of finished tasks, and the requests kept to queue failed ones again.

A finished task is remembered as a bare float, its lastcrawltime, in the common case (a
success at the first attempt, without itag), and as a small ``Finished`` tuple
otherwise. Its URL is kept only when it failed, so a succeeded task is listed and
viewed with an empty URL. The requests of FAILED and BAD tasks are kept (in the order
they failed) so that a person can queue them again.
"""

from __future__ import annotations

from collections.abc import Callable, Container, Sequence
from typing import NamedTuple, TypeVar

from skitter.frontier._base import PushOutcome, TaskInfo, TaskState
from skitter.frontier._memory._task import TaskKey, TaskView, check_request, task_key, taskid_of
from skitter.http import Request, in_domain

__all__ = ["Done", "Finished", "FinishedTasks", "lastcrawltime_of", "recrawl_due"]

T = TypeVar("T")
_SUCCESS = TaskState.SUCCESS
_new_view = tuple.__new__  # a third of TaskView(...)'s cost: a flush views every row


class Finished(NamedTuple):
    """A finished task that is not a plain first-attempt success."""

    state: TaskState
    lastcrawltime: float
    itag: str | None
    retried: int
    reason: str
    url: str


Done = float | Finished


def recrawl_due(done: Done, request: Request, now: float) -> bool:
    """pyspider's rule: the *incoming* request's itag and age decide."""
    if isinstance(done, Finished):
        lastcrawltime, itag = done.lastcrawltime, done.itag
    else:
        lastcrawltime, itag = done, None
    if request.itag is not None and request.itag != itag:
        return True
    age = request.age
    return age >= 0 and lastcrawltime + age <= now


def lastcrawltime_of(done: Done | None) -> float:
    if done is None:
        return 0.0
    return float(done.lastcrawltime if isinstance(done, Finished) else done)


class FinishedTasks:
    """The last outcome of every task that finished, kept when it is queued again.

    ``done`` is shared with the queue, which reads and writes it on its hot path."""

    __slots__ = ("done", "kept")

    def __init__(self) -> None:
        self.done: dict[TaskKey, Done] = {}
        self.kept: dict[TaskKey, Request] = {}  # FAILED and BAD tasks, to queue again

    def stage(
        self,
        requests: Sequence[Request],
        now: float,
        force: Sequence[bool] | None,
        prepare: Callable[[Request], T],
        active: Container[TaskKey],
    ) -> list[tuple[TaskKey, T | None]]:
        """``MemoryTaskQueue.stage``: a request is queued anew if its task is not queued
        (``active``) and has not finished, or is due for a recrawl, or is forced."""
        done_of = self.done.get if self.done else None
        staged: list[tuple[TaskKey, T | None]] = []
        for i, request in enumerate(requests):
            check_request(request)
            tk = request.taskid if request.has_explicit_taskid else request.fingerprint
            if tk.__class__ is str:
                tk = task_key(tk)
            anew = tk not in active and (
                done_of is None
                or (done := done_of(tk)) is None
                or (force is not None and force[i])
                or recrawl_due(done, request, now)
            )
            staged.append((tk, prepare(request) if anew else None))
        return staged

    def keep(self, key: TaskKey, request: Request) -> None:
        """Keep the request of a task that just failed for good, after the others."""
        self.kept.pop(key, None)
        self.kept[key] = request

    def view(self, key: TaskKey) -> TaskView | None:
        """The view of a finished task (the queue's when it is not queued again)."""
        done = self.done.get(key)
        if done is None:
            return None
        if isinstance(done, Finished):
            state, last, retried, reason, itag, url = (
                done.state, float(done.lastcrawltime), done.retried, done.reason, done.itag,
                done.url,
            )  # fmt: skip
        else:
            state, last, retried, reason, itag, url = _SUCCESS, done, 0, "", None, ""
        return _new_view(
            TaskView,
            (
                taskid_of(key),
                state,
                None,
                None,
                None,
                0.0,
                None,
                "",
                retried,
                last,
                reason,
                itag,
                url,
            ),
        )

    def listing(self, state: TaskState, limit: int, active: Container[TaskKey]) -> list[TaskInfo]:
        """Finished tasks in ``state`` that are not queued again, most recent first."""
        found: list[tuple[float, str, Finished | None]] = []
        for key, done in self.done.items():
            if key in active:  # queued again: its last outcome is history
                continue
            if isinstance(done, Finished):
                if done.state is state:
                    found.append((done.lastcrawltime, taskid_of(key), done))
            elif state is TaskState.SUCCESS:
                found.append((done, taskid_of(key), None))
        found.sort(key=lambda entry: entry[0], reverse=True)
        out = []
        for when, taskid, kept in found[:limit]:
            if kept is None:
                out.append(TaskInfo(taskid, "", TaskState.SUCCESS, 0, float(when), ""))
            else:
                out.append(
                    TaskInfo(taskid, kept.url, kept.state, kept.retried, float(when), kept.reason)
                )
        return out

    def requeue(
        self,
        state: TaskState,
        now: float,
        domain: str | None,
        reason: str | None,
        active: Container[TaskKey],
        push: Callable[[Request, float, bool], PushOutcome],
    ) -> int:
        """Queue the tasks in ``state`` (FAILED or BAD) again with ``push`` (forced, due
        now, in the order they failed), if their host is ``domain`` or a subdomain and
        their reason contains ``reason`` (each filter when given); how many were."""
        count = 0
        for key, request in list(self.kept.items()):
            done = self.done.get(key)
            if (
                key in active
                or not isinstance(done, Finished)
                or done.state not in (TaskState.FAILED, TaskState.BAD)
            ):
                del self.kept[key]  # queued again, or succeeded since
                continue
            if done.state is not state:
                continue
            if domain is not None and not in_domain(request.url, domain):
                continue
            if reason is not None and reason not in done.reason:
                continue
            del self.kept[key]
            request.exetime = 0.0
            if push(request, now, True) is not PushOutcome.IGNORED:
                count += 1
        return count

    def restore(self, key: TaskKey, view: TaskView) -> None:
        """Remember a finished task read back from storage, compactly when it can be."""
        state, last, retried, itag = view.state, view.lastcrawltime, view.retried, view.itag
        if state is TaskState.SUCCESS and not retried and itag is None:
            self.done[key] = last
        else:
            url = "" if state is TaskState.SUCCESS else view.url
            self.done[key] = Finished(state, last, itag, retried, view.reason, url)
