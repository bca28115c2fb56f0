"""What ``shell``, ``fetch``, ``view``, ``parse`` and ``check`` share: their options, the
spider they run as, and the crawler built for it.

They download as a crawl would, so they need a spider: the one ``--spider`` (or
``check NAME``) names, read as ``crawl`` reads its arguments (a file, ``FILE.py:Name``,
a directory, or a spider's name in the project around the current directory:
``_targets.spiders_for``), or ``DefaultSpider`` (no ``allowed_domains``: every host),
as in Scrapy. The crawler gets the project's settings (the ``settings.py`` of the
project around the spider file or the current directory), the spider's
``custom_settings``, ``SKITTER_*`` variables and ``-s``, like ``crawl``.
"""

from __future__ import annotations

import argparse
import logging
import os
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from rich.console import Console

from skitter.cli._logging import LogOptions, install_logging
from skitter.cli._options import add_log_options, add_setting_options, cli_settings, pairs
from skitter.cli._project import Project, load_project
from skitter.cli._targets import project_spiders, spiders_for
from skitter.crawler import Crawler
from skitter.exceptions import ConfigError, IgnoreRequest
from skitter.spider import Spider

__all__ = [
    "DefaultSpider",
    "add_common_options",
    "build_crawler",
    "build_crawlers",
    "describe_error",
    "guess_url",
    "spider_classes",
]


class DefaultSpider(Spider):
    """The spider of a URL no ``--spider`` names (Scrapy's ``DefaultSpider``)."""

    name = "default"


def add_common_options(cmd: argparse.ArgumentParser, *, spider: bool = True) -> None:
    if spider:
        cmd.add_argument(
            "--spider",
            metavar="SPIDER",
            help="download as this spider (its settings, middlewares and allowed_domains): "
            "its name in the project, FILE.py or FILE.py:Name (default: a spider of its "
            "own, every host allowed)",
        )
    add_setting_options(cmd)
    add_log_options(cmd)


def spider_classes(
    spider_arg: str | None, cli_settings: Mapping[str, Any], *, several: bool
) -> tuple[Project | None, list[type[Spider]]]:
    """The project and the spider classes ``spider_arg`` names (``DefaultSpider`` for
    None); with ``several`` False, exactly one or a ConfigError."""
    if spider_arg is None:
        return load_project([Path.cwd()], Path.cwd(), os.environ), [DefaultSpider]
    project, classes = spiders_for([spider_arg], cli_settings, os.environ, Path.cwd())
    if not several and len(classes) != 1:
        names = ", ".join(cls.name or cls.__name__ for cls in classes)
        raise ConfigError(
            f"{spider_arg} holds several spiders ({names}): name one with FILE.py:Name"
        )
    return project, classes


def build_crawler(
    args: argparse.Namespace,
    console: Console,
    spider_arg: str | None,
    overrides: Mapping[str, Any] | None = None,
    forced: Mapping[str, Any] | None = None,
) -> Crawler:
    """The crawler of ``spider_arg`` (or ``DefaultSpider``): see ``build_crawlers``."""
    return build_crawlers(args, console, spider_arg, overrides, forced, several=False)[0]


def build_crawlers(
    args: argparse.Namespace,
    console: Console,
    spider_arg: str | None,
    overrides: Mapping[str, Any] | None = None,
    forced: Mapping[str, Any] | None = None,
    *,
    several: bool = True,
) -> list[Crawler]:
    """A crawler per spider ``spider_arg`` names (``DefaultSpider`` for None) with the
    project's settings, then ``overrides`` (the command's defaults), ``-s``, and
    ``forced`` (what the command's own options decide, e.g. parse without --pipelines);
    logging set up as the LOG_* settings say (``-L``, ``--logfile``; off with
    ``--nolog``)."""
    settings: dict[str, Any] = dict(overrides or {})
    settings.update(cli_settings(args))  # -s, and -L, --logfile, --nolog as LOG_* settings
    settings.update(forced or {})
    project, classes = spider_classes(spider_arg, settings, several=several)
    spider_args: dict[str, Any] = pairs(args.spider_args, "-a")
    readers = [*classes, *project_spiders(project)]  # a shared setting may be theirs
    crawlers = [
        Crawler(
            cls,
            project.layer if project else None,
            cli_settings=settings,
            env=os.environ,
            readers=readers,
            **spider_args,
        )
        for cls in classes
    ]
    if args.nolog:
        logging.getLogger().handlers.clear()
        logging.disable(logging.CRITICAL)
    else:
        install_logging(LogOptions.from_settings(crawlers[0].settings), console)
    return crawlers


def guess_url(arg: str) -> tuple[str, bool]:
    """A command-line URL, or a local file (``./page.html``, ``/tmp/p.html``, an existing
    path) as a ``file:`` URL; and whether it is such a file (which the user named, so
    it is let through the scope's refusal of ``file:`` URLs)."""
    if "://" in arg or arg.startswith(("data:", "file:")):
        return arg, False
    path = Path(arg)
    if arg.startswith((".", "/", "~")) or path.exists():
        return path.expanduser().resolve().as_uri(), True
    return f"http://{arg}", False


def describe_error(exc: BaseException, spider: Any) -> str:
    """One line on why a download failed, naming the spider when its scope refused."""
    if isinstance(exc, IgnoreRequest) and "offsite" in str(exc):
        domains = ", ".join(getattr(spider, "allowed_domains", ()) or ()) or "none"
        return f"{exc} (spider {spider.name!r}, allowed_domains: {domains})"
    return f"{type(exc).__name__}: {exc}"
