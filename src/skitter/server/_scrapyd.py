"""Scrapyd's HTTP API, with its parameters and JSON shapes, so that scrapyd-client,
ScrapydWeb and cron scripts written for Scrapyd work against ``skitter server``::

    GET  daemonstatus.json  {"status", "running", "pending", "finished", "node_name"}
    POST addversion.json   project version egg=@file (an egg or a wheel)
                           or directory=PATH (a project directory on this machine)
    POST schedule.json     project spider [setting=NAME=VALUE]... [jobid] [_version]
                           [priority] [any other name=value: a spider argument]
    POST cancel.json       project job [signal=TERM|INT|KILL]
    GET  listprojects.json | listversions.json?project | listspiders.json?project[&_version]
    GET  listjobs.json[?project]
    POST delversion.json   project version
    POST delproject.json   project
    GET  logs/PROJECT/SPIDER/JOB.log | items/PROJECT/SPIDER/JOB.jl

Parameters are read from the query string and from a form body alike, as Scrapyd reads
them. Errors are ``{"status": "error", "message": ...}`` with HTTP 400 (404 for an
unknown log or items file). Times are the service's local time, written as Scrapyd
writes them (``2024-01-31 10:14:03.594664``).
"""

from __future__ import annotations

import datetime as dt
import signal
import socket
from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import Any

import orjson
from aiohttp import web
from aiohttp.http_exceptions import HttpProcessingError
from multidict import MultiDict

from skitter.exceptions import ConfigError
from skitter.server._deploy import ProjectStore, check_name
from skitter.server._runner import Launcher
from skitter.server._store import Run, RunStore

__all__ = ["ScrapydApi"]

_SIGNALS = {"TERM": signal.SIGTERM, "INT": signal.SIGINT, "KILL": signal.SIGKILL}
_RESERVED = frozenset({"project", "spider", "setting", "jobid", "_version", "priority"})
#: The largest project upload accepted (an egg with data files can be large).
MAX_UPLOAD = 200 * 2**20

Handler = Callable[[web.Request], Awaitable[web.StreamResponse]]


class ApiError(Exception):
    """A request the API refuses; the message goes back as Scrapyd's ``message``."""


class ScrapydApi:
    def __init__(self, launcher: Launcher, projects: ProjectStore, store: RunStore) -> None:
        self.launcher = launcher
        self.projects = projects
        self.store = store
        self.node_name = socket.gethostname()

    def add_routes(self, router: web.UrlDispatcher) -> None:
        for name, handler in {
            "daemonstatus": self.daemonstatus,
            "listprojects": self.listprojects,
            "listversions": self.listversions,
            "listspiders": self.listspiders,
            "listjobs": self.listjobs,
        }.items():
            router.add_get(f"/{name}.json", self._wrap(handler))
        for name, handler in {
            "addversion": self.addversion,
            "schedule": self.schedule,
            "cancel": self.cancel,
            "delversion": self.delversion,
            "delproject": self.delproject,
        }.items():
            router.add_post(f"/{name}.json", self._wrap(handler))
        router.add_get("/logs/{project}/{spider}/{file}", self.log_file)
        router.add_get("/items/{project}/{spider}/{file}", self.items_file)

    def _wrap(self, handler: Callable[[MultiDict[Any]], Awaitable[dict[str, Any]]]) -> Handler:
        async def wrapped(request: web.Request) -> web.StreamResponse:
            try:
                params = await _params(request)
                answer = await handler(params)
            except (ApiError, ConfigError, LookupError) as exc:
                message = exc.args[0] if isinstance(exc, LookupError) and exc.args else str(exc)
                return self._json({"status": "error", "message": message}, status=400)
            return self._json({"status": "ok", **answer})

        wrapped.__name__ = handler.__name__
        return wrapped

    def _json(self, data: dict[str, Any], status: int = 200) -> web.Response:
        return web.Response(
            status=status,
            body=orjson.dumps({"node_name": self.node_name, **data}),
            content_type="application/json",
            headers={"Cache-Control": "no-store"},
        )

    # -- status and listings --------------------------------------------------------------
    async def daemonstatus(self, params: MultiDict[Any]) -> dict[str, Any]:
        return {
            "pending": len(self.launcher.pending()),
            "running": len(self.launcher.running()),
            "finished": self.store.count("ended"),
        }

    async def listprojects(self, params: MultiDict[Any]) -> dict[str, Any]:
        return {"projects": self.projects.projects()}

    async def listversions(self, params: MultiDict[Any]) -> dict[str, Any]:
        return {"versions": self.projects.versions(_required(params, "project"))}

    async def listspiders(self, params: MultiDict[Any]) -> dict[str, Any]:
        deployed = self.projects.get(_required(params, "project"), params.get("_version"))
        return {"spiders": list(deployed.spiders)}

    async def listjobs(self, params: MultiDict[Any]) -> dict[str, Any]:
        project = params.get("project")

        def mine(run: Run) -> bool:
            return project is None or run.project == project

        return {
            "pending": [self._pending(r) for r in self.launcher.pending() if mine(r)],
            "running": [self._running(r) for r in self.launcher.running() if mine(r)],
            "finished": [
                self._finished(r) for r in self.store.query(project=project, state="ended")
            ],
        }

    def _pending(self, run: Run) -> dict[str, Any]:
        return {
            "id": run.job, "project": run.project, "spider": run.spider,
            "version": run.version, "settings": run.settings, "args": run.args,
        }  # fmt: skip

    def _running(self, run: Run) -> dict[str, Any]:
        return {
            "id": run.job, "project": run.project, "spider": run.spider, "pid": run.pid,
            "start_time": _time(run.started_at), **self._urls(run),
        }  # fmt: skip

    def _finished(self, run: Run) -> dict[str, Any]:
        return {
            "id": run.job, "project": run.project, "spider": run.spider,
            "start_time": _time(run.started_at), "end_time": _time(run.ended_at),
            **self._urls(run),
        }  # fmt: skip

    def _urls(self, run: Run) -> dict[str, Any]:
        files = self.launcher.files(run)
        base = f"{run.project}/{run.spider}/{run.job}"
        return {
            "log_url": f"/logs/{base}.log",
            "items_url": f"/items/{base}.jl" if files.items.exists() else None,
        }

    # -- changes --------------------------------------------------------------------------
    async def addversion(self, params: MultiDict[Any]) -> dict[str, Any]:
        project = check_name("project", _required(params, "project"))
        version = check_name("version", _required(params, "version"))
        egg, directory = params.get("egg"), params.get("directory")
        if (egg is None) == (directory is None):
            raise ApiError("send either egg (an egg or wheel file) or directory (a path)")
        if directory is not None:
            deployed = await self.projects.add_directory(project, version, Path(str(directory)))
        else:
            if not isinstance(egg, web.FileField):
                raise ApiError("egg must be an uploaded file (multipart/form-data)")
            deployed = await self.projects.add_archive(project, version, egg.file.read())
        return {"project": project, "version": version, "spiders": len(deployed.spiders)}

    async def schedule(self, params: MultiDict[Any]) -> dict[str, Any]:
        project, spider = _required(params, "project"), _required(params, "spider")
        settings = dict(_setting(value) for value in params.getall("setting", []))
        args = {k: str(v) for k, v in params.items() if k not in _RESERVED}
        run = self.launcher.schedule(
            project,
            spider,
            version=params.get("_version"),
            args=args,
            settings=settings,
            job=params.get("jobid"),
            priority=_priority(params.get("priority")),
        )
        return {"jobid": run.job}

    async def cancel(self, params: MultiDict[Any]) -> dict[str, Any]:
        project, job = _required(params, "project"), _required(params, "job")
        name = str(params.get("signal", "TERM")).upper().removeprefix("SIG")
        if name not in _SIGNALS:
            raise ApiError(f"signal must be one of {', '.join(_SIGNALS)}, not {name!r}")
        run = self.store.get(job)
        if run is None or run.project != project:
            raise ApiError(f"job {job!r} not found in project {project!r}")
        return {"prevstate": await self.launcher.cancel(job, _SIGNALS[name])}

    async def delversion(self, params: MultiDict[Any]) -> dict[str, Any]:
        self.projects.delete_version(_required(params, "project"), _required(params, "version"))
        return {}

    async def delproject(self, params: MultiDict[Any]) -> dict[str, Any]:
        self.projects.delete_project(_required(params, "project"))
        return {}

    # -- files ----------------------------------------------------------------------------
    async def log_file(self, request: web.Request) -> web.StreamResponse:
        return self._file(request, ".log", lambda run: self.launcher.files(run).log)

    async def items_file(self, request: web.Request) -> web.StreamResponse:
        return self._file(request, ".jl", lambda run: self.launcher.files(run).items)

    def _file(
        self, request: web.Request, suffix: str, where: Callable[[Run], Path]
    ) -> web.StreamResponse:
        info = request.match_info
        job = info["file"].removesuffix(suffix)
        run = self.store.get(job) if info["file"].endswith(suffix) else None
        if run is None or (run.project, run.spider) != (info["project"], info["spider"]):
            raise web.HTTPNotFound(text="no such run")
        path = where(run)
        if not path.is_file():
            raise web.HTTPNotFound(text="this run has no such file (yet)")
        return web.FileResponse(
            path, headers={"Content-Type": "text/plain; charset=utf-8", "Cache-Control": "no-store"}
        )


async def _params(request: web.Request) -> MultiDict[Any]:
    params: MultiDict[Any] = MultiDict(request.query)
    if request.method == "POST" and request.body_exists:
        try:
            params.extend(await request.post())
        except HttpProcessingError as exc:  # a broken multipart body: the sender's fault
            raise ApiError(f"the request body is not a readable form: {exc.message}") from None
    return params


def _required(params: MultiDict[Any], name: str) -> str:
    value = params.get(name)
    if not isinstance(value, str) or not value:
        raise ApiError(f"'{name}' parameter is required")
    return value


def _setting(value: Any) -> tuple[str, str]:
    name, sep, setting = str(value).partition("=")
    if not sep or not name:
        raise ApiError(f"setting must be NAME=VALUE, not {value!r}")
    return name, setting


def _priority(value: Any) -> float:
    if value is None or value == "":
        return 0.0
    try:
        return float(value)
    except ValueError:
        raise ApiError(f"priority must be a number, not {value!r}") from None


def _time(epoch: float | None) -> str | None:
    if epoch is None:
        return None
    return dt.datetime.fromtimestamp(epoch).strftime("%Y-%m-%d %H:%M:%S.%f")
