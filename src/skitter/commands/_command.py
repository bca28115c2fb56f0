"""``ScrapyCommand``: the base of a project's own commands (``COMMANDS_MODULE``).

A Scrapy project may name a package of commands in ``COMMANDS_MODULE``; each module of it
defines one ``ScrapyCommand`` subclass, which ``skitter`` (as ``scrapy``) offers as a
command of the module's name inside that project::

    # myproject/commands/hello.py
    from skitter.commands import ScrapyCommand

    class HelloCommand(ScrapyCommand):
        requires_project = True

        def short_desc(self):
            return "Say hello to each spider"

        def add_options(self, parser):
            super().add_options(parser)
            parser.add_argument("--shout", action="store_true")

        def run(self, args, opts):
            ...  # self.settings, self.crawler_process

Before ``run(args, opts)`` (``args`` the positional arguments, ``opts`` the parsed
options) the command has ``settings`` (its ``default_settings`` under the project's,
the environment's and ``-s``) and ``crawler_process``, a ``CrawlerProcess`` on those
settings whose ``crawl`` also takes a spider's name. Its ``exitcode`` is the command's
exit status. Skitter's settings are immutable: a command changes them by setting
``default_settings`` or by building new ones (``settings.with_layer``), not with
``settings.set``.
"""

from __future__ import annotations

import argparse
from collections.abc import Sequence
from typing import Any, ClassVar

from skitter.exceptions import ConfigError

__all__ = ["ScrapyCommand"]


class ScrapyCommand:
    """What every project command shares: its description, the global options, and the
    settings they make."""

    #: Whether the command runs only inside a project (project commands always do).
    requires_project: ClassVar[bool] = False
    #: Whether ``crawler_process`` is built before ``run``.
    requires_crawler_process: ClassVar[bool] = True
    #: Settings of this command, below the project's.
    default_settings: ClassVar[dict[str, Any]] = {}
    exitcode: int = 0

    def __init__(self) -> None:
        self.settings: Any = None
        self.crawler_process: Any = None
        #: What ``process_options`` read from the global options: the command line layer.
        self.cli_settings: dict[str, Any] = {}

    def syntax(self) -> str:
        """The arguments, as the usage line shows them."""
        return ""

    def short_desc(self) -> str:
        """One line, for the list of commands."""
        return ""

    def long_desc(self) -> str:
        """The description of ``skitter COMMAND -h``."""
        return self.short_desc()

    def help(self) -> str:
        return self.long_desc()

    def add_options(self, parser: argparse.ArgumentParser) -> None:
        """The global options; a subclass adds its own after calling this."""
        group = parser.add_argument_group("Global Options")
        group.add_argument("--logfile", metavar="FILE", help="log to FILE (LOG_FILE)")
        group.add_argument("-L", "--loglevel", metavar="LEVEL", help="log level (LOG_LEVEL)")
        group.add_argument("--nolog", action="store_true", help="disable logging")
        group.add_argument(
            "-s", "--set", action="append", default=[], metavar="NAME=VALUE", help="a setting"
        )

    def process_options(self, args: Sequence[str], opts: argparse.Namespace) -> None:
        """Turn the global options into the command line's settings."""
        for value in getattr(opts, "set", None) or ():
            name, sep, rest = value.partition("=")
            if not sep or not name:
                raise ConfigError(f"-s expects NAME=VALUE, got {value!r}")
            self.cli_settings[name.strip()] = rest
        overrides = self.cli_settings  # -s, then what -L, --logfile and --nolog set
        if getattr(opts, "logfile", None):
            overrides["LOG_FILE"] = opts.logfile
        if getattr(opts, "loglevel", None):
            overrides["LOG_LEVEL"] = opts.loglevel
        if getattr(opts, "nolog", False):
            overrides["LOG_ENABLED"] = False

    def run(self, args: list[str], opts: argparse.Namespace) -> None:
        """Do the command's work."""
        raise NotImplementedError
