"""The task pages of a run (``_tasks``)::

GET /runs/JOB/tasks?state=failed    its tasks (all, or those in one state), with counts
GET /runs/JOB/task?url=URL          one URL: state, attempts, last crawl, last error,
                                    and the items the run's feed holds for it
"""

from __future__ import annotations

from collections import Counter

from aiohttp import web

from skitter._secrets import mask_page_url
from skitter.exceptions import ConfigError
from skitter.server._html import esc, json_text, link, page, qs, table, when
from skitter.server._results import ItemFilter, read_page
from skitter.server._runner import Launcher
from skitter.server._store import Run, RunStore
from skitter.server._tasks import STATES, TASK_LIST_LIMIT, TaskView, items_of, read_tasks

__all__ = ["TaskPages", "task_link"]


def task_link(job: str, url: str) -> str:
    """A URL as a link to its task page (the URL shown with any password masked)."""
    return link(f"/runs/{job}/task{qs(url=url)}", mask_page_url(url))


class TaskPages:
    def __init__(self, launcher: Launcher, store: RunStore) -> None:
        self.launcher = launcher
        self.store = store

    def add_routes(self, router: web.UrlDispatcher) -> None:
        router.add_get("/runs/{job}/tasks", self.tasks)
        router.add_get("/runs/{job}/task", self.task)

    async def tasks(self, request: web.Request) -> web.Response:
        run = self._run(request)
        state = request.query.get("state") or None
        if state is not None and state not in STATES:
            raise web.HTTPBadRequest(text=f"state must be one of {', '.join(STATES)}")
        every = await self._read(run)
        counts = Counter(task.state for task in every)
        chosen = [t for t in every if state is None or t.state == state]
        tabs = " · ".join(
            link(f"/runs/{run.job}/tasks{qs(state=name)}", f"{name} ({counts[name]})")
            for name in STATES
        )
        body = f'<p id="task-states">{link(f"/runs/{run.job}/tasks", "all")} · {tabs}</p>'
        rows = [_task_row(run, task) for task in chosen[:TASK_LIST_LIMIT]]
        headers = ["URL", "State", "Attempts", "Last crawl", "Last error"]
        body += table(headers, rows, ident="tasks", empty="no tasks")
        if len(chosen) > TASK_LIST_LIMIT:
            body += f"<p>The first {TASK_LIST_LIMIT} of {len(chosen)} are listed.</p>"
        return _html(page(f"Tasks of run {run.job}", body))

    async def task(self, request: web.Request) -> web.Response:
        run = self._run(request)
        url = request.query.get("url")
        if not url:
            raise web.HTTPBadRequest(text="url is required: /runs/JOB/task?url=URL")
        found = [task for task in await self._read(run) if task.url == url]
        body = f"<p>{link(f'/runs/{run.job}', 'the run')} · "
        body += f"{link(f'/runs/{run.job}/tasks', 'all its tasks')}</p>"
        if not found:
            body += '<p class="error" id="no-task">This run never queued this URL.</p>'
        for task in found:
            facts = [
                ("URL", esc(mask_page_url(task.url))), ("State", esc(task.state)),
                ("Attempts", str(task.attempts)), ("Last crawl", esc(when(task.last_crawl))),
                ("Last error", esc(task.reason)),
                ("Next crawl", "none: the run has ended (a new run crawls it again)"),
            ]  # fmt: skip
            body += table(["", ""], facts, ident="task")
        path = self.launcher.files(run).items
        candidates = read_page(path, ItemFilter("url", url), page=1, per_page=10_000)
        items = items_of(candidates.items, url)
        body += "<h2>Items from this URL</h2><p>Items whose url field is this URL.</p>"
        columns = list(dict.fromkeys(key for item in items for key in item))
        rows = [[esc(json_text(item.get(c, ""))) for c in columns] for item in items]
        body += table(columns or ["(none)"], rows, ident="task-items", empty="no items")
        return _html(page("Task", body))

    async def _read(self, run: Run) -> list[TaskView]:
        if run.state != "ended":
            raise web.HTTPConflict(text="the tasks of a run are shown once it has ended")
        try:
            tasks = await read_tasks(self.launcher.files(run).job_dir)
        except ConfigError as exc:
            raise web.HTTPConflict(text=f"this run's job cannot be read: {exc}") from None
        if tasks is None:
            raise web.HTTPNotFound(text="this run left no job database")
        return tasks

    def _run(self, request: web.Request) -> Run:
        run = self.store.get(request.match_info["job"])
        if run is None:
            raise web.HTTPNotFound(text="no such run")
        return run


def _task_row(run: Run, task: TaskView) -> list[str]:
    return [
        task_link(run.job, task.url), esc(task.state), str(task.attempts),
        esc(when(task.last_crawl)), esc(task.reason),
    ]  # fmt: skip


def _html(text: str) -> web.Response:
    return web.Response(text=text, content_type="text/html", headers={"Cache-Control": "no-store"})
