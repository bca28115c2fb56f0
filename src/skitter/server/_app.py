"""``Server``: the long-running service behind ``skitter server``.

One aiohttp application on one port serves Scrapyd's API (``_scrapyd``), the pages of
the run history, results and schedules (``_pages``), the files of each run, and all of
it as an OpenAPI document at ``/openapi.json`` (``_openapi``). Its
state lives under ``data_dir``::

    runs.sqlite                 the run history (RunStore)
    projects/P/V/               deployed versions (ProjectStore)
    logs/ items/ runs/          each run's log, items, job directory and stats
    schedules.json              the schedules (ScheduleBook)

A run is kept until more than ``keep_runs`` newer ones have ended, or for
``keep_days`` after it ended (None: forever), whichever comes first; its files go with
its row.
"""

from __future__ import annotations

import logging
import shutil
from dataclasses import dataclass
from pathlib import Path
from types import TracebackType
from typing import Any, Self

from aiohttp import web

from skitter._clock import Clock, SystemClock
from skitter._secrets import mask_text
from skitter.exceptions import ConfigError
from skitter.server._auth import Access, Handler
from skitter.server._deploy import ProjectStore
from skitter.server._openapi import openapi_document
from skitter.server._pages import Pages
from skitter.server._runner import Launcher
from skitter.server._schedule import ScheduleBook, Scheduler
from skitter.server._scrapyd import MAX_UPLOAD, ScrapydApi
from skitter.server._store import Run, RunStore
from skitter.server._taskpages import TaskPages

__all__ = ["Server", "ServerOptions"]

log = logging.getLogger("skitter.server")

_SECURITY_HEADERS = {
    "Content-Security-Policy": (
        "default-src 'none'; style-src 'self'; img-src 'self'; form-action 'self'; "
        "base-uri 'none'; frame-ancestors 'none'"
    ),
    "X-Content-Type-Options": "nosniff",
    "X-Frame-Options": "DENY",
    "Referrer-Policy": "same-origin",
}


@dataclass(frozen=True, slots=True)
class ServerOptions:
    """What ``skitter server`` is told; every field is honoured or refused at start."""

    data_dir: Path
    host: str = "127.0.0.1"
    port: int = 6800
    username: str | None = None
    password: str | None = None
    max_proc: int = 4
    keep_runs: int | None = 1000
    keep_days: float | None = None
    log_max_bytes: int = 10 * 2**20
    log_backups: int = 2
    #: With a Redis URL, runs are dispatched to ``skitter agent`` processes (``_dispatch``).
    redis_url: str | None = None
    agent_timeout: float = 30.0

    def check(self) -> None:
        if self.max_proc < 1:
            raise ConfigError(f"--max-proc must be at least 1, not {self.max_proc}")
        if self.keep_runs is not None and self.keep_runs < 1:
            raise ConfigError(f"--keep-runs must be at least 1, not {self.keep_runs}")
        if self.keep_days is not None and self.keep_days <= 0:
            raise ConfigError(f"--keep-days must be more than 0, not {self.keep_days}")
        if self.log_max_bytes < 1024:
            raise ConfigError(f"--log-max-bytes must be at least 1024, not {self.log_max_bytes}")
        if self.log_backups < 0:
            raise ConfigError(f"--log-backups must be 0 or more, not {self.log_backups}")
        if not self.agent_timeout > 0:
            raise ConfigError(f"--agent-timeout must be more than 0, not {self.agent_timeout}")


class Server:
    """The service: ``async with Server(options) as server: ...`` (``server.url``)."""

    def __init__(self, options: ServerOptions, *, clock: Clock | None = None) -> None:
        options.check()
        self.options = options
        self.access = Access(options.host, options.username, options.password)
        self.clock = clock or SystemClock()
        self.interrupted: list[str] = []
        self._runner: web.AppRunner | None = None
        self._url: str | None = None
        self.store: RunStore | None = None

    @property
    def url(self) -> str:
        if self._url is None:
            raise RuntimeError("the server is not started")
        return self._url

    async def start(self) -> None:
        data = self.options.data_dir
        try:
            data.mkdir(parents=True, exist_ok=True)
        except OSError as exc:
            raise ConfigError(f"cannot use {data} as the data directory: {exc}") from None
        self.store, self.interrupted = RunStore.open(data / "runs.sqlite", self.clock.time())
        for job in self.interrupted:
            log.warning("Run %s was pending or running when the service stopped: interrupted", job)
        self.projects = ProjectStore(data / "projects")
        self.launcher = await self._launcher()
        self.launcher.on_end.append(self._prune)
        self.schedules = ScheduleBook(data / "schedules.json")
        self.scheduler = Scheduler(self.schedules, self.launcher, self.clock)
        runner = web.AppRunner(self.make_app(), access_log=None, shutdown_timeout=1.0)
        await runner.setup()
        try:
            await web.TCPSite(runner, self.options.host, self.options.port).start()
        except OSError as exc:
            await runner.cleanup()
            self.store.close()
            raise ConfigError(
                f"skitter server cannot listen on {self.options.host}:{self.options.port}: {exc}"
            ) from None
        self._runner = runner
        host, port = runner.addresses[0][:2]
        self._url = f"http://{f'[{host}]' if ':' in host else host}:{port}/"
        self.scheduler.start()
        self._prune(None)

    async def _launcher(self) -> Launcher:
        """Local processes, or, with a Redis URL, runs dispatched to the agents."""
        assert self.store is not None
        opts = self.options
        common: dict[str, Any] = {
            "max_proc": opts.max_proc,
            "log_max_bytes": opts.log_max_bytes,
            "log_backups": opts.log_backups,
        }
        if opts.redis_url is None:
            return Launcher(self.store, self.projects, opts.data_dir, now=self.clock.time, **common)
        from skitter.server._dispatch import Dispatcher  # redis-py: only when dispatching

        dispatcher = Dispatcher(
            self.store, self.projects, opts.data_dir, redis_url=opts.redis_url,
            agent_timeout=opts.agent_timeout, now=self.clock.time, **common,
        )  # fmt: skip
        try:
            left = [run for job in self.interrupted if (run := self.store.get(job))]
            await dispatcher.forget(left)  # the agents stop what a killed service left
        except Exception as exc:
            await dispatcher.redis.aclose()
            self.store.close()
            why = mask_text(str(exc))
            raise ConfigError(f"skitter server cannot use Redis ({dispatcher}): {why}") from None
        return dispatcher

    async def stop(self) -> None:
        runner, self._runner = self._runner, None
        if runner is None:
            return
        await self.scheduler.stop()
        await self.launcher.stop()
        await runner.cleanup()
        if self.store is not None:
            self.store.close()

    async def __aenter__(self) -> Self:
        await self.start()
        return self

    async def __aexit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        await self.stop()

    def make_app(self) -> web.Application:
        assert self.store is not None
        app = web.Application(
            middlewares=[_security_headers, self.access.middleware], client_max_size=MAX_UPLOAD
        )
        ScrapydApi(self.launcher, self.projects, self.store).add_routes(app.router)
        Pages(self.launcher, self.store, self.schedules, self.scheduler).add_routes(app.router)
        TaskPages(self.launcher, self.store).add_routes(app.router)
        app.router.add_get("/openapi.json", _openapi)
        return app

    def _prune(self, _ended: Run | None) -> None:
        """Forget runs beyond ``keep_runs`` or older than ``keep_days``, files and all."""
        assert self.store is not None
        days = self.options.keep_days
        cutoff = None if days is None else self.clock.time() - days * 86400
        for run in self.store.prune(keep_count=self.options.keep_runs, older_than=cutoff):
            files = self.launcher.files(run)
            for path in (files.log, files.items):
                path.unlink(missing_ok=True)
            for rotated in files.log.parent.glob(f"{files.log.name}.*"):
                rotated.unlink(missing_ok=True)
            shutil.rmtree(files.job_dir.parent, ignore_errors=True)


async def _openapi(request: web.Request) -> web.Response:
    """This API as an OpenAPI 3.1 document."""
    return web.json_response(openapi_document(), headers={"Cache-Control": "no-store"})


@web.middleware
async def _security_headers(request: web.Request, handler: Handler) -> web.StreamResponse:
    try:
        response = await handler(request)
    except web.HTTPException as exc:
        exc.headers.update(_SECURITY_HEADERS)
        raise
    for name, value in _SECURITY_HEADERS.items():
        response.headers.setdefault(name, value)
    return response
