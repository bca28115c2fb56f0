"""The service's pages: run history, one run, its results, the schedules.

::

    GET  /                          runs, newest first (?project ?spider ?outcome ?state ?page)
    GET  /runs/JOB                  one run: what was asked, how it ended, stats, feeds, log
    POST /runs/JOB/cancel           stop it (pending or running)
    GET  /runs/JOB/results          its items (?page ?field ?value), with export links
    GET  /runs/JOB/items.jsonl|csv  the (filtered) items, to download
    GET  /runs/JOB/tasks, /task     its tasks, one URL's task (``_taskpages``)
    GET  /schedules                 the schedules, and a form to add one
    POST /schedules                 add or replace one (the form's fields)
    POST /schedules/NAME/delete
    GET  /schedules.json            the schedules as JSON; POST addschedule.json and
                                    delschedule.json change them (form parameters)
"""

from __future__ import annotations

from importlib import resources
from typing import Any

import orjson
from aiohttp import web
from aiohttp.http_exceptions import HttpProcessingError
from multidict import MultiDictProxy

from skitter.exceptions import ConfigError
from skitter.server._html import duration, esc, json_text, link, page, qs, table, when
from skitter.server._results import ItemFilter, read_page, to_csv, to_jsonl
from skitter.server._runner import Launcher
from skitter.server._schedule import Schedule, ScheduleBook, Scheduler
from skitter.server._store import ENDED, Run, RunStore
from skitter.server._taskpages import task_link

__all__ = ["Pages"]

RUNS_PER_PAGE = 50
ITEMS_PER_PAGE = 50
#: The end of a run's log shown on its page (the whole log is a link away).
LOG_TAIL_BYTES = 64 * 1024
_FILTERS = ("project", "spider", "outcome", "state")


class Pages:
    def __init__(
        self, launcher: Launcher, store: RunStore, book: ScheduleBook, scheduler: Scheduler
    ) -> None:
        self.launcher = launcher
        self.store = store
        self.book = book
        self.scheduler = scheduler
        self._css = resources.files("skitter.server").joinpath("static", "server.css").read_bytes()
        # the dashboard's icon: one skitter, one icon
        self._icon = (
            resources.files("skitter.dashboard").joinpath("static", "favicon.svg").read_bytes()
        )

    def add_routes(self, router: web.UrlDispatcher) -> None:
        router.add_get("/", self.runs)
        router.add_get("/static/server.css", self.css)
        router.add_get("/static/favicon.svg", self.icon)
        router.add_get("/runs/{job}", self.run)
        router.add_post("/runs/{job}/cancel", self.cancel)
        router.add_get("/runs/{job}/results", self.results)
        router.add_get("/runs/{job}/items.jsonl", self.export_jsonl)
        router.add_get("/runs/{job}/items.csv", self.export_csv)
        router.add_get("/schedules", self.schedules)
        router.add_post("/schedules", self.add_schedule)
        router.add_post("/schedules/{name}/delete", self.delete_schedule)
        router.add_get("/schedules.json", self.schedules_json)
        router.add_post("/addschedule.json", self.add_schedule_json)
        router.add_post("/delschedule.json", self.delete_schedule_json)

    async def css(self, request: web.Request) -> web.Response:
        return web.Response(body=self._css, content_type="text/css")

    async def icon(self, request: web.Request) -> web.Response:
        return web.Response(body=self._icon, content_type="image/svg+xml")

    # -- runs -----------------------------------------------------------------------------
    async def runs(self, request: web.Request) -> web.Response:
        wanted = {name: request.query.get(name) or None for name in _FILTERS}
        number = _page_number(request)
        runs = self.store.query(
            **wanted, limit=RUNS_PER_PAGE + 1, offset=(number - 1) * RUNS_PER_PAGE
        )
        more = len(runs) > RUNS_PER_PAGE
        rows = [_run_row(run) for run in runs[:RUNS_PER_PAGE]]
        body = _filters_form(wanted, self.store.projects())
        body += table(
            ["Job", "Project", "Spider", "Version", "State", "Started", "Ended", "Took",
             "Items", "Exit", "Finish reason", "Schedule"],
            rows, ident="runs", empty="no runs match",
        )  # fmt: skip
        body += _pager(request, number, more)
        return _html(page("Runs", body, current="/"))

    async def run(self, request: web.Request) -> web.Response:
        run = self._run(request)
        files = self.launcher.files(run)
        base = f"{run.project}/{run.spider}/{run.job}"
        facts = [
            ("Project", esc(run.project)), ("Spider", esc(run.spider)),
            ("Version", esc(run.version)), ("State", _state(run)),
            ("Queued", esc(when(run.queued_at))), ("Started", esc(when(run.started_at))),
            ("Ended", esc(when(run.ended_at))),
            ("Took", esc(duration(run.started_at, run.ended_at))),
            ("Exit status", esc(run.exit_status)), ("Finish reason", esc(run.finish_reason)),
            ("Items", esc(run.items)), ("Process", esc(run.pid)), ("Schedule", esc(run.schedule)),
        ]  # fmt: skip
        if run.cluster_job:
            facts.append(("Cluster job", esc(run.cluster_job)))
        body = table(["", ""], facts, ident="facts")
        if run.state != "ended":
            body += (
                f'<form class="inline" method="post" action="/runs/{esc(run.job)}/cancel">'
                '<button type="submit" id="cancel">Cancel this run</button></form>'
            )
        body += "<h2>Arguments and settings</h2>"
        pairs = [("argument", k, v) for k, v in run.args.items()]
        pairs += [("setting", k, v) for k, v in run.settings.items()]
        body += table(["Kind", "Name", "Value"], [tuple(map(esc, p)) for p in pairs], ident="args")
        body += "<h2>Feeds and files</h2>"
        feeds = [(link(f"/logs/{base}.log", "log"), esc(_size(files.log)))]
        if files.items.exists():
            feeds.append((link(f"/items/{base}.jl", "items (JSON lines)"), esc(_size(files.items))))
            feeds.append((link(f"/runs/{run.job}/results", "results page"), ""))
        if run.state == "ended":
            feeds.append((link(f"/runs/{run.job}/tasks", "tasks (every URL)"), ""))
        body += table(["File", "Size"], feeds, ident="files")
        body += "<h2>Stats</h2>"
        stats = sorted((run.stats or {}).items())
        body += table(["Name", "Value"], [(esc(k), esc(json_text(v))) for k, v in stats],
                      ident="stats", empty="no stats (yet)")  # fmt: skip
        body += f"<h2>Log (its end)</h2><pre class=log id=log>{esc(_tail(files.log))}</pre>"
        return _html(page(f"Run {run.job}", body))

    async def cancel(self, request: web.Request) -> web.Response:
        run = self._run(request)
        await self.launcher.cancel(run.job)
        raise web.HTTPSeeOther(f"/runs/{run.job}")

    # -- results --------------------------------------------------------------------------
    async def results(self, request: web.Request) -> web.Response:
        run = self._run(request)
        keep = _item_filter(request)
        number = _page_number(request)
        found = read_page(
            self.launcher.files(run).items, keep, page=number, per_page=ITEMS_PER_PAGE
        )
        body = (
            '<form class="filters" method="get">'
            f'<label>Field<input name="field" value="{esc(keep.field)}"></label>'
            f'<label>Contains<input name="value" value="{esc(keep.value)}"></label>'
            '<button type="submit">Filter</button></form>'
        )
        filters = qs(field=keep.field, value=keep.value)
        body += (
            f'<p id="count">{found.total} items match. Export: '
            f"{link(f'/runs/{run.job}/items.jsonl{filters}', 'JSON lines')} · "
            f"{link(f'/runs/{run.job}/items.csv{filters}', 'CSV')} · "
            f"{link(f'/runs/{run.job}', 'the run')}</p>"
        )
        if found.unreadable:
            body += (
                f'<p class="error">{found.unreadable} lines of the feed are not JSON objects.</p>'
            )
        rows = [
            [_cell(item.get(c), run.job if c == "url" else None) for c in found.columns]
            for item in found.items
        ]
        body += table(found.columns or ["(no items)"], rows, ident="items", empty="no items match")
        more = number * ITEMS_PER_PAGE < found.total
        body += _pager(request, number, more)
        return _html(page(f"Results of {run.spider} ({run.job})", body))

    async def export_jsonl(self, request: web.Request) -> web.Response:
        run = self._run(request)
        data = to_jsonl(self.launcher.files(run).items, _item_filter(request))
        return _download(data, "application/x-ndjson", f"{run.spider}-{run.job}.jsonl")

    async def export_csv(self, request: web.Request) -> web.Response:
        run = self._run(request)
        text = to_csv(self.launcher.files(run).items, _item_filter(request))
        return _download(text.encode(), "text/csv; charset=utf-8", f"{run.spider}-{run.job}.csv")

    # -- schedules ------------------------------------------------------------------------
    async def schedules(self, request: web.Request, error: str | None = None) -> web.Response:
        rows = [_schedule_row(s) for s in self.book]
        body = table(
            ["Name", "Project", "Spider", "When", "Arguments", "Overlap", "Missed", "Next",
             "Last run", "Fired", "Skipped", ""],
            rows, ident="schedules", empty="no schedules",
        )  # fmt: skip
        if error:
            body += f'<p class="error" id="schedule-error">{esc(error)}</p>'
        body += _SCHEDULE_FORM
        return _html(page("Schedules", body, current="/schedules"), status=400 if error else 200)

    async def add_schedule(self, request: web.Request) -> web.Response:
        try:
            self.scheduler.put(_schedule_from(await _form(request)))
        except ConfigError as exc:
            return await self.schedules(request, error=str(exc))
        raise web.HTTPSeeOther("/schedules")

    async def delete_schedule(self, request: web.Request) -> web.Response:
        try:
            self.scheduler.remove(request.match_info["name"])
        except LookupError as exc:
            raise web.HTTPNotFound(text=str(exc.args[0])) from None
        raise web.HTTPSeeOther("/schedules")

    async def schedules_json(self, request: web.Request) -> web.Response:
        from dataclasses import asdict

        return _json({"status": "ok", "schedules": [asdict(s) for s in self.book]})

    async def add_schedule_json(self, request: web.Request) -> web.Response:
        try:
            schedule = _schedule_from(await _form(request))
            self.scheduler.put(schedule)
        except ConfigError as exc:
            return _json({"status": "error", "message": str(exc)}, status=400)
        return _json({"status": "ok", "name": schedule.name, "next_at": schedule.next_at})

    async def delete_schedule_json(self, request: web.Request) -> web.Response:
        try:
            self.scheduler.remove(str((await _form(request)).get("name", "")))
        except LookupError as exc:
            return _json({"status": "error", "message": str(exc.args[0])}, status=400)
        except ConfigError as exc:
            return _json({"status": "error", "message": str(exc)}, status=400)
        return _json({"status": "ok"})

    def _run(self, request: web.Request) -> Run:
        run = self.store.get(request.match_info["job"])
        if run is None:
            raise web.HTTPNotFound(text="no such run")
        return run


_SCHEDULE_FORM = """<h2>Add or replace a schedule</h2>
<form class="inline" method="post" action="/schedules" id="new-schedule">
<label>Name<input name="name" required></label>
<label>Project<input name="project" required></label>
<label>Spider<input name="spider" required></label>
<label>Cron (UTC)<input name="cron" placeholder="0 3 * * *"></label>
<label>or every (seconds)<input name="every" inputmode="numeric"></label>
<label>Arguments (name=value, one a line)<textarea name="args" rows="2"></textarea></label>
<label>Settings (NAME=value, one a line)<textarea name="settings" rows="2"></textarea></label>
<label>Missed runs<select name="missed"><option value="skip">skip</option>
<option value="once">run once</option></select></label>
<label>Allow overlap<input type="checkbox" name="overlap" value="1"></label>
<button type="submit">Save</button></form>"""


async def _form(request: web.Request) -> MultiDictProxy[Any]:
    """The request's form; a body that cannot be read as one is a ConfigError (a 400
    with the reason), not a server error."""
    try:
        return await request.post()
    except HttpProcessingError as exc:
        raise ConfigError(f"the request body is not a readable form: {exc.message}") from None


def _schedule_from(form: MultiDictProxy[Any]) -> Schedule:
    def text(name: str) -> str | None:
        value = form.get(name)
        return value.strip() or None if isinstance(value, str) else None

    every = text("every")
    try:
        seconds = float(every) if every else None
    except ValueError:
        raise ConfigError(f"every must be a number of seconds, not {every!r}") from None
    return Schedule(
        name=text("name") or "",
        project=text("project") or "",
        spider=text("spider") or "",
        cron=text("cron"),
        every=seconds,
        args=_lines(text("args"), "argument"),
        settings=_lines(text("settings"), "setting"),
        overlap=text("overlap") in ("1", "true", "on"),
        missed=text("missed") or "skip",
    )


def _lines(text: str | None, what: str) -> dict[str, str]:
    out: dict[str, str] = {}
    for line in (text or "").splitlines():
        if not line.strip():
            continue
        name, sep, value = line.partition("=")
        if not sep or not name.strip():
            raise ConfigError(f"each {what} is name=value, not {line!r}")
        out[name.strip()] = value.strip()
    return out


def _schedule_row(s: Schedule) -> list[str]:
    delete = (
        f'<form method="post" action="/schedules/{esc(s.name)}/delete">'
        '<button type="submit" class="delete">Delete</button></form>'
    )
    last = link(f"/runs/{s.last_job}", s.last_job) if s.last_job else esc(s.last_error or "")
    return [
        esc(s.name), esc(s.project), esc(s.spider),
        esc(f"cron {s.cron}" if s.cron else f"every {s.every:g} s"),
        esc(", ".join(f"{k}={v}" for k, v in s.args.items())),
        "yes" if s.overlap else "no", esc(s.missed), esc(when(s.next_at)), last,
        str(s.fired), str(s.skipped), delete,
    ]  # fmt: skip


def _run_row(run: Run) -> list[str]:
    return [
        link(f"/runs/{run.job}", run.job), esc(run.project), esc(run.spider), esc(run.version),
        _state(run), esc(when(run.started_at)), esc(when(run.ended_at)),
        esc(duration(run.started_at, run.ended_at)), esc(run.items), esc(run.exit_status),
        esc(run.finish_reason), esc(run.schedule),
    ]  # fmt: skip


def _state(run: Run) -> str:
    word = run.outcome if run.state == "ended" and run.outcome else run.state
    cls = f"outcome-{word}" if run.state == "ended" else f"state-{word}"
    return f'<span class="state {esc(cls)}">{esc(word)}</span>'


def _filters_form(wanted: dict[str, str | None], projects: list[str]) -> str:
    options = "".join(
        f"<option{' selected' if wanted['project'] == p else ''}>{esc(p)}</option>"
        for p in projects
    )
    outcomes = "".join(
        f"<option{' selected' if wanted['outcome'] == o else ''}>{o}</option>" for o in ENDED
    )
    any_option = '<option value="">any</option>'
    return (
        '<form class="filters" method="get" action="/" id="run-filters">'
        f'<label>Project<select name="project">{any_option}{options}</select></label>'
        f'<label>Spider<input name="spider" value="{esc(wanted["spider"])}"></label>'
        f'<label>Outcome<select name="outcome">{any_option}{outcomes}</select></label>'
        '<button type="submit">Filter</button></form>'
    )


def _pager(request: web.Request, number: int, more: bool) -> str:
    def to(n: int) -> str:
        return str(request.rel_url.update_query(page=str(n)))

    parts = []
    if number > 1:
        parts.append(
            link(to(number - 1), "← newer" if request.path == "/" else "← previous", "prev")
        )
    if more:
        parts.append(link(to(number + 1), "older →" if request.path == "/" else "next →", "next"))
    return f'<div class="pager">{"".join(parts)}</div>' if parts else ""


#: The highest page number asked for: far beyond any history, and low enough that the
#: offset it makes stays an integer SQLite can take.
MAX_PAGE = 10**9


def _page_number(request: web.Request) -> int:
    raw = request.query.get("page", "1")
    if not raw.isascii() or not raw.isdigit() or not 1 <= int(raw) <= MAX_PAGE:
        raise web.HTTPBadRequest(text=f"page must be a number from 1 to {MAX_PAGE}, not {raw!r}")
    return int(raw)


def _item_filter(request: web.Request) -> ItemFilter:
    return ItemFilter(request.query.get("field") or None, request.query.get("value") or None)


def _cell(value: object, job: str | None = None) -> str:
    """An item's field; a ``url`` field links to its task page."""
    if job is not None and isinstance(value, str):
        return task_link(job, value)
    text = json_text(value) if value is not None else ""
    if len(text) > 500:  # the whole value is in the exports
        return esc(text[:500]) + '<span class="cut"> … (cut: see the export)</span>'
    return esc(text)


def _size(path: Any) -> str:
    try:
        return f"{path.stat().st_size:,} bytes"
    except OSError:
        return "not written"


def _tail(path: Any) -> str:
    try:
        with path.open("rb") as file:
            size = file.seek(0, 2)
            file.seek(max(0, size - LOG_TAIL_BYTES))
            data: bytes = file.read()
    except OSError:
        return "(no log yet)"
    text = data.decode("utf-8", "replace")
    return text if size <= LOG_TAIL_BYTES else "…\n" + text.partition("\n")[2]


def _html(text: str, status: int = 200) -> web.Response:
    return web.Response(
        text=text, status=status, content_type="text/html", headers={"Cache-Control": "no-store"}
    )


def _json(data: Any, status: int = 200) -> web.Response:
    return web.Response(body=orjson.dumps(data), status=status, content_type="application/json")


def _download(data: bytes, content_type: str, name: str) -> web.Response:
    response = web.Response(body=data, headers={"Cache-Control": "no-store"})
    response.headers["Content-Type"] = content_type
    response.headers["Content-Disposition"] = f'attachment; filename="{name}"'
    return response
