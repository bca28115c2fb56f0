"""``skitter server``: a long-running service that deploys, runs, schedules and
remembers crawls, with Scrapyd's HTTP API.

Projects are deployed as Scrapyd takes them (``addversion.json``: an egg from
``scrapyd-deploy``, a wheel, or a directory), runs are local ``skitter crawl``
processes with a job directory, a log and an items feed each, and every run is kept in
a SQLite history that the pages list, filter and open, with each run's results. A
service stopped or killed mid-run shows that run as interrupted at its next start.
"""

from skitter.server._app import Server, ServerOptions
from skitter.server._cron import Cron
from skitter.server._schedule import Schedule, ScheduleBook, Scheduler

__all__ = ["Cron", "Schedule", "ScheduleBook", "Scheduler", "Server", "ServerOptions"]
