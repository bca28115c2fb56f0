"""Whether a crawl's start requests got anywhere: a crawl none of whose start requests
got a response the spider accepted did not do what was asked.

Start requests carry ``meta["is_start_request"]`` (Scrapy 2.13's key, set by the
feeder), so whoever runs one, here or on another worker, knows it for one: when its
response passes the spider middlewares' input (the callback runs) it is *accepted*;
when its task ends otherwise (a download that failed for good, a status the spider
does not handle, offsite, forbidden by robots.txt, a bad URL) it is *refused*, with
the reason its task records, unless the request's errback takes the failure: then the
spider handles it, which counts as accepted (as a failure an errback handles is not
the crawl's ERROR either). Both are written to the project's ``StartRecord`` before
the task is settled: ``LocalStartRecord`` in one process, the job's shared record in
Redis for a worker (``cluster.StartClaim``), so that when the job is finished its
record is complete.

At the end of a crawl that finished (not one stopped, or failed already), the process
that queued every start request itself, first to last, judges (``judge_starts``): with
none accepted and some refused, a WARNING names them and their causes, and the crawl
fails (exit 1) unless FAIL_WHEN_NO_START_SUCCEEDS is off. Any other process has no
verdict to give: another worker, or a resumed job whose start requests were queued, in
part or in all, by an earlier run (whose outcomes this run did not all see).
"""

from __future__ import annotations

import logging
from typing import TYPE_CHECKING

from skitter._types import LISTED_STARTS, StartOutcomes
from skitter.settings import EngineSettings

if TYPE_CHECKING:
    from skitter.engine._project import Project
    from skitter.http import Request

__all__ = [
    "START_META",
    "LocalStartRecord",
    "judge_starts",
    "start_accepted",
    "start_ended",
]

log = logging.getLogger("skitter.engine")

#: The meta key that marks a start request (Scrapy's).
START_META = "is_start_request"


class LocalStartRecord:
    """The record of a crawl in one process."""

    def __init__(self) -> None:
        self._outcomes = StartOutcomes()

    async def accepted(self) -> None:
        self._outcomes.accepted = True

    async def refused(self, url: str, reason: str) -> None:
        outcomes = self._outcomes
        outcomes.refused += 1
        if len(outcomes.listed) < LISTED_STARTS:
            outcomes.listed.append((url, reason))

    async def outcomes(self) -> StartOutcomes:
        return self._outcomes


async def start_accepted(project: Project) -> None:
    """A start request's response reached its callback (or its failure its errback):
    counted, and recorded before its task is settled."""
    project.stats.inc("start_requests/accepted")
    await project.starts.accepted()


async def start_ended(
    project: Project, request: Request, reason: str, *, bug: bool = False
) -> None:
    """A start request's task ends without a response its callback takes, for
    ``reason``: refused, unless its errback takes the failure (the spider's business,
    as it is for the ERROR line), which is as good as accepted. A ``bug`` (a component
    that raised) never reaches the errback."""
    if request.errback is not None and not bug:
        await start_accepted(project)
        return
    project.stats.inc("start_requests/refused")
    await project.starts.refused(request.url, reason)


async def judge_starts(project: Project) -> None:
    """At the end of a finished crawl: warn, and fail the crawl unless
    FAIL_WHEN_NO_START_SUCCEEDS is off, when not one start request got a response the
    spider accepted (see the module for who judges)."""
    if project.failure is not None or project.closing not in (None, "finished"):
        return
    if not project.fed_every_start or not project.start_requests_queued:
        return
    try:
        outcomes = await project.starts.outcomes()
    except Exception as exc:  # the job's record out of reach: no verdict, and no failure
        log.warning("Could not read how the start requests of %s ended: %s", project.name, exc)
        return
    if outcomes.accepted or not outcomes.refused:
        return
    lines = [f"  {url}: {reason}" for url, reason in outcomes.listed]
    if outcomes.refused > len(outcomes.listed):
        lines.append(f"  ... and {outcomes.refused - len(outcomes.listed)} more")
    log.warning(
        "Spider %s: not one of its start requests got a response it accepted (%d failed):\n%s",
        project.name,
        outcomes.refused,
        "\n".join(lines),
    )
    if project.settings.view(EngineSettings).fail_when_no_start_succeeds:
        count = outcomes.refused
        what = (
            "its start request got no response it accepted"
            if count == 1
            else f"not one of its {count} start requests got a response it accepted"
        )
        project.fail(
            f"{what} (see the warning above; FAIL_WHEN_NO_START_SUCCEEDS=False ends such "
            "a crawl as finished)",
            stop=False,
        )
