"""What ``shell``, ``fetch``, ``view``, ``parse`` and ``check`` share: their options, the
spider they run as, and the crawler built for it.

They download as a crawl would, so they need a spider: the one ``--spider`` (or
``check NAME``) names, read as ``crawl`` reads its arguments (a file, ``FILE.py:Name``,
a directory, or a spider's name in the project around the current directory:
``_targets.spiders_for``). Without ``--spider``, inside a project, the URL chooses, as
Scrapy's ``spidercls_for_request`` does: the one spider of the project that handles it
(its ``allowed_domains`` admit the URL's host, or its name is that host). When none or
several do, ``parse`` (which needs the spider's callbacks) refuses with their names and
how to name one; ``shell``, ``fetch`` and ``view`` say so and go on as
``DefaultSpider`` (no ``allowed_domains``: every host), as they do outside a project.
The crawler gets the project's settings (the ``settings.py`` of the project around the
spider file or the current directory), the spider's ``custom_settings``, ``SKITTER_*``
variables and ``-s``, like ``crawl``.
"""

from __future__ import annotations

import argparse
import contextlib
import logging
import os
from collections.abc import Iterator, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from rich.console import Console

from skitter.cli._logging import LogOptions, install_logging
from skitter.cli._options import add_log_options, add_setting_options, cli_settings, pairs
from skitter.cli._project import Project, load_project
from skitter.cli._spiders import SpiderLoader
from skitter.cli._targets import project_settings, project_spiders, spiders_for
from skitter.crawler import Crawler
from skitter.exceptions import ConfigError, IgnoreRequest
from skitter.http import Scope, in_domain
from skitter.spider import Spider

log = logging.getLogger("skitter.cli")

__all__ = [
    "DefaultSpider",
    "ForUrl",
    "add_common_options",
    "build_crawler",
    "build_crawlers",
    "describe_error",
    "guess_url",
    "handles",
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
            "its name in the project, FILE.py or FILE.py:Name (default: inside a project, "
            "its spider whose allowed_domains hold the URL's host; else a spider of its "
            "own, every host allowed)",
        )
    add_setting_options(cmd)
    add_log_options(cmd)


@dataclass(frozen=True, slots=True)
class ForUrl:
    """The URL a command downloads, for choosing the project's spider without
    ``--spider``; ``required``: the command cannot do with ``DefaultSpider`` (parse)."""

    url: str | None
    required: bool = False


def spider_classes(
    spider_arg: str | None,
    cli_settings: Mapping[str, Any],
    *,
    several: bool,
    for_url: ForUrl | None = None,
) -> tuple[Project | None, list[type[Spider]], str | None]:
    """The project and the spider classes ``spider_arg`` names (without it: the
    project's spider for ``for_url``, else ``DefaultSpider``); with ``several`` False,
    exactly one or a ConfigError. The third value is what to tell the person when the
    URL chose no spider (None when there is nothing to tell)."""
    if spider_arg is None:
        project = load_project([Path.cwd()], Path.cwd(), os.environ)
        if project is None or for_url is None:
            if for_url is not None and for_url.required:
                raise ConfigError(
                    "no spider to run: name one with --spider FILE.py (or NAME inside a project)"
                )
            return project, [DefaultSpider], None
        cls, message = _spider_for_url(project, cli_settings, for_url)
        return project, [cls], message
    project, classes = spiders_for([spider_arg], cli_settings, os.environ, Path.cwd())
    if not several and len(classes) != 1:
        names = ", ".join(cls.name or cls.__name__ for cls in classes)
        raise ConfigError(
            f"{spider_arg} holds several spiders ({names}): name one with FILE.py:Name"
        )
    return project, classes, None


def _spider_for_url(
    project: Project, cli: Mapping[str, Any], for_url: ForUrl
) -> tuple[type[Spider], str | None]:
    """The project's one spider that handles the URL; else ``DefaultSpider`` and why
    (or a ConfigError saying why, when a spider is required)."""
    url = guess_url(for_url.url)[0] if for_url.url else ""
    if not url.startswith(("http://", "https://")):  # no host to choose by
        if for_url.required:
            raise ConfigError(f"no spider handles {url or 'no URL'}: name one with --spider NAME")
        return DefaultSpider, None
    loader = SpiderLoader.from_settings(project_settings(project, os.environ, cli))
    names = loader.list()
    handling = [name for name in names if handles(loader.load(name), url)]
    if len(handling) == 1:
        return loader.load(handling[0]), None
    if handling:
        why = f"several spiders of the project handle {url} ({', '.join(handling)})"
    else:
        listed = ", ".join(names) or "none"
        why = (
            f"no spider of the project handles {url}: none has its host in allowed_domains "
            f"(the project's spiders: {listed})"
        )
    if for_url.required:
        raise ConfigError(f"{why}; name the spider to use with --spider NAME")
    return (
        DefaultSpider,
        f"{why}; downloading as a spider of its own (every host allowed): "
        "name the project's spider with --spider NAME",
    )


def handles(spidercls: type[Spider], url: str) -> bool:
    """Whether ``spidercls`` handles ``url`` (Scrapy's ``Spider.handles_request``): its
    ``allowed_domains`` admit the URL's host (a spider without them handles none), or
    its name is that host."""
    name = spidercls.name
    if name and in_domain(url, name):
        return True
    allowed = getattr(spidercls, "allowed_domains", None)
    if not allowed:
        return False
    with _quiet_scope():
        return bool(Scope(allowed).allows_url(url))


@contextlib.contextmanager
def _quiet_scope() -> Iterator[None]:
    """Each spider's scope warns of its odd entries when its crawl is built; looking
    at every spider of the project for a URL must not warn of them all."""
    scope_log = logging.getLogger("skitter.scope")
    level = scope_log.level
    scope_log.setLevel(logging.ERROR)
    try:
        yield
    finally:
        scope_log.setLevel(level)


def build_crawler(
    args: argparse.Namespace,
    console: Console,
    spider_arg: str | None,
    overrides: Mapping[str, Any] | None = None,
    forced: Mapping[str, Any] | None = None,
    *,
    for_url: ForUrl | None = None,
) -> Crawler:
    """The crawler of ``spider_arg`` (or, without it, of the project's spider for
    ``for_url``, else ``DefaultSpider``): see ``build_crawlers``."""
    return build_crawlers(
        args, console, spider_arg, overrides, forced, several=False, for_url=for_url
    )[0]


def build_crawlers(
    args: argparse.Namespace,
    console: Console,
    spider_arg: str | None,
    overrides: Mapping[str, Any] | None = None,
    forced: Mapping[str, Any] | None = None,
    *,
    several: bool = True,
    for_url: ForUrl | None = None,
) -> list[Crawler]:
    """A crawler per spider ``spider_arg`` names (see ``spider_classes`` for None) with
    the project's settings, then ``overrides`` (the command's defaults), ``-s``, and
    ``forced`` (what the command's own options decide, e.g. parse without --pipelines);
    logging set up as the LOG_* settings say (``-L``, ``--logfile``; off with
    ``--nolog``)."""
    settings: dict[str, Any] = dict(overrides or {})
    settings.update(cli_settings(args))  # -s, and -L, --logfile, --nolog as LOG_* settings
    settings.update(forced or {})
    project, classes, message = spider_classes(
        spider_arg, settings, several=several, for_url=for_url
    )
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
    if message is not None:
        log.warning("%s", message)
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
