"""A project's own commands: ``COMMANDS_MODULE``, Scrapy's way.

Inside a project whose settings name ``COMMANDS_MODULE`` (a package), each module of the
package that defines a ``ScrapyCommand`` subclass (``skitter.commands``, or
``scrapy.commands`` under the alias) is a command named as the module, listed in
``skitter -h`` with its ``short_desc``. It runs as Scrapy runs it: built, given its
options (``add_options``), ``process_options``, then ``settings`` and a
``crawler_process`` whose ``crawl`` also takes a spider's name, then ``run``; its
``exitcode`` is the exit status.

A module that fails to import, or a command named as one of skitter's own, is a
ConfigError naming it (skitter's commands cannot be replaced). A project whose settings
cannot be loaded offers no commands of its own; the command run reports why.
"""

from __future__ import annotations

import argparse
import importlib
import inspect
import os
import pkgutil
from pathlib import Path
from types import ModuleType
from typing import Any

from rich.console import Console

from skitter.cli._project import Project, find_project, load_project
from skitter.cli._spiders import SpiderLoader
from skitter.commands import ScrapyCommand
from skitter.crawler import Crawler, CrawlerProcess
from skitter.exceptions import ConfigError
from skitter.settings import Settings
from skitter.spider import Spider

__all__ = ["add_project_commands"]


class _ProjectCrawlerProcess(CrawlerProcess):
    """``crawl`` by a spider's name too, as Scrapy's process does inside a project."""

    def create_crawler(self, spidercls: Crawler | type[Spider] | str, **kwargs: Any) -> Crawler:
        if isinstance(spidercls, str):
            settings = self.settings if self.settings is not None else {}
            spidercls = SpiderLoader.from_settings(settings).load(spidercls)
        return super().create_crawler(spidercls, **kwargs)


def _project(cwd: Path) -> Project | None:
    if find_project(cwd, cwd, os.environ) is None:
        return None
    try:
        return load_project([cwd], cwd, os.environ)
    except ConfigError:
        return None  # the command run says why


def _modules(package: str) -> list[ModuleType]:
    try:
        root = importlib.import_module(package)
        found = [root]
        for info in pkgutil.iter_modules(getattr(root, "__path__", [])):
            found.append(importlib.import_module(f"{package}.{info.name}"))
    except Exception as exc:
        raise ConfigError(
            f"COMMANDS_MODULE {package!r}: cannot import it: {type(exc).__name__}: {exc}"
        ) from None
    return found


def _commands_of(module: ModuleType) -> list[type[ScrapyCommand]]:
    return [
        obj
        for obj in vars(module).values()
        if inspect.isclass(obj)
        and issubclass(obj, ScrapyCommand)
        and obj is not ScrapyCommand
        and obj.__module__ == module.__name__
    ]


def add_project_commands(commands: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    """Add the commands of the project around the current directory, if it has any."""
    project = _project(Path.cwd())
    package = project.settings.get("COMMANDS_MODULE") if project is not None else None
    if not package or project is None:
        return
    for module in _modules(str(package)):
        name = module.__name__.rpartition(".")[2]
        for cls in _commands_of(module)[:1]:
            if name in commands.choices:
                raise ConfigError(
                    f"COMMANDS_MODULE {package!r}: the command {name!r} ({cls.__qualname__}) "
                    "has the name of one of skitter's own, which cannot be replaced; rename "
                    "its module"
                )
            _add(commands, name, cls, project)


def _add(
    commands: argparse._SubParsersAction[argparse.ArgumentParser],
    name: str,
    cls: type[ScrapyCommand],
    project: Project,
) -> None:
    command = cls()
    parser = commands.add_parser(
        name,
        help=command.short_desc() or f"{name} (the project's command)",
        description=command.long_desc(),
        usage=f"skitter {name} {command.syntax()}".rstrip(),
    )
    command.add_options(parser)
    parser.add_argument("args", nargs="*", metavar="ARG", help=argparse.SUPPRESS)

    def handler(opts: argparse.Namespace, console: Console) -> int:
        args = list(opts.args)
        command.process_options(args, opts)
        base = Settings(dict(cls.default_settings), source="command")
        layer = project.layer if project.layer is not None else project.settings
        command.settings = Settings.resolve(
            base.with_layer(layer, "project"), env=os.environ, cli=command.cli_settings
        )
        if cls.requires_crawler_process:
            command.crawler_process = _ProjectCrawlerProcess(command.settings)
        command.run(args, opts)
        return int(command.exitcode or 0)

    parser.set_defaults(handler=handler)
