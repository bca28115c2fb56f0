"""What ``shell``, ``fetch``, ``view``, ``parse`` and ``check`` share: their options, the
spider they run as, and the crawler built for it.

They download as a crawl would, so they need a spider: the one ``--spider`` (or
``check NAME``) names, through ``resolve_spider`` alone, or ``DefaultSpider`` (no
``allowed_domains``: every host), as in Scrapy. The crawler gets the project's settings
(the ``settings.py`` of the project around the spider file or the current directory),
the spider's ``custom_settings``, ``SKITTER_*`` variables and ``-s``, like ``crawl``.
"""

from __future__ import annotations

import argparse
import logging
import os
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from rich.console import Console

from skitter.cli._loader import load_spiders, split_target
from skitter.cli._project import Project, load_project
from skitter.cli._run import setup_logging
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
    "pairs",
    "resolve_spider",
    "resolve_spiders",
]


class DefaultSpider(Spider):
    """The spider of a URL no ``--spider`` names (Scrapy's ``DefaultSpider``)."""

    name = "default"


def resolve_spiders(arg: str) -> list[type[Spider]]:
    """The spider classes ``arg`` names: ``FILE.py``, ``FILE.py:Name``, a directory.

    The one place a command's spider argument is read, so that looking a spider up by
    its name in the project (SPIDER_MODULES) plugs in here."""
    return load_spiders(arg)


def resolve_spider(arg: str) -> type[Spider]:
    """The one spider class ``arg`` names (see ``resolve_spiders``)."""
    found = resolve_spiders(arg)
    if len(found) != 1:
        names = ", ".join(cls.name or cls.__name__ for cls in found)
        raise ConfigError(f"{arg} holds several spiders ({names}): name one with FILE.py:Name")
    return found[0]


def add_common_options(cmd: argparse.ArgumentParser, *, spider: bool = True) -> None:
    if spider:
        cmd.add_argument(
            "--spider",
            metavar="SPIDER",
            help="download as this spider (its settings, middlewares and allowed_domains): "
            "FILE.py or FILE.py:Name (default: a spider of its own, every host allowed)",
        )
    cmd.add_argument(
        "-s", "--set", action="append", default=[], metavar="NAME=VALUE", help="a setting"
    )
    cmd.add_argument(
        "-a",
        dest="spider_args",
        action="append",
        default=[],
        metavar="NAME=VALUE",
        help="a spider argument",
    )
    cmd.add_argument("-L", "--loglevel", default=None, help="log level (overrides LOG_LEVEL)")
    cmd.add_argument("--nolog", action="store_true", help="no log output at all")


def pairs(values: list[str], flag: str) -> dict[str, str]:
    out = {}
    for value in values:
        name, sep, rest = value.partition("=")
        if not sep or not name:
            raise ConfigError(f"{flag} expects NAME=VALUE, got {value!r}")
        out[name.strip()] = rest
    return out


def _project(spider_arg: str | None) -> Project | None:
    paths = [Path(split_target(spider_arg)[0])] if spider_arg else [Path.cwd()]
    return load_project(paths, Path.cwd(), os.environ)


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
    logging set up at LOG_LEVEL, ``-L``, or off with ``--nolog``."""
    project = _project(spider_arg)  # before the spiders: their imports may need it
    if spider_arg is None:
        classes: list[type[Spider]] = [DefaultSpider]
    else:
        classes = resolve_spiders(spider_arg) if several else [resolve_spider(spider_arg)]
    cli_settings: dict[str, Any] = dict(overrides or {})
    cli_settings.update(pairs(args.set, "-s"))
    cli_settings.update(forced or {})
    spider_args: dict[str, Any] = pairs(args.spider_args, "-a")
    crawlers = [
        Crawler(
            cls,
            project.settings if project else None,
            cli_settings=cli_settings,
            env=os.environ,
            **spider_args,
        )
        for cls in classes
    ]
    if args.nolog:
        logging.getLogger().handlers.clear()
        logging.disable(logging.CRITICAL)
    else:
        setup_logging(args.loglevel or crawlers[0].settings["LOG_LEVEL"], console)
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
