"""Periodic callbacks of a service (``@every``): run now, then every ``interval`` s.

What one yields is scheduled like start requests; items go to the pipelines. A failure
of one run is logged and counted and the next run comes all the same; a task store out
of reach is reported for the dispatcher to ride out; a ``FatalError`` fails the project.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Awaitable, Callable
from typing import Any

from skitter.engine._project import Project
from skitter.exceptions import FatalError, FrontierUnavailable
from skitter.http import Request
from skitter.items import is_item
from skitter.pipelines import MediaPending
from skitter.spider import aiter_output

__all__ = ["run_every"]

log = logging.getLogger("skitter.engine")


async def run_every(
    project: Project,
    method: Callable[[], Any],
    interval: float,
    *,
    enqueue: Callable[[Project, list[Request]], Awaitable[None]],
    bad_output: Callable[[Project, object, str], None],
    store_unavailable: Callable[[FrontierUnavailable], None],
    wake: Callable[[], None],
) -> None:
    """Run ``method`` every ``interval`` seconds while the project runs."""
    name = getattr(method, "__qualname__", repr(method))
    while project.closing is None:
        batch: list[Request] = []
        try:
            async for obj in aiter_output(method()):
                if isinstance(obj, Request):
                    batch.append(obj)
                elif is_item(obj):
                    result = await project.pipelines.process_item(obj, project.spider)
                    if result.__class__ is MediaPending:
                        batch.extend(result.requests)
                elif obj is not None:
                    bad_output(project, obj, name)
            if batch:
                await enqueue(project, batch)
        except FatalError as exc:
            project.fail(exc)
            wake()
            return
        except FrontierUnavailable as exc:
            log.warning("Periodic callback %s: task store unavailable: %s", name, exc)
            project.stats.inc("engine/periodic_errors")
            store_unavailable(exc)
        except Exception:
            log.exception("Error in periodic callback %s", name)
            project.stats.inc("engine/periodic_errors")
        project.stats.inc("engine/periodic_runs")
        await asyncio.sleep(interval)
