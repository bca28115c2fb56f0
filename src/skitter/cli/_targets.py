"""What ``skitter crawl``'s arguments name: spider files, directories, or spider names.

An argument that is an existing path (``spider.py``, ``spider.py:Name``, ``spiders/``)
is loaded from the file, as ``scrapy runspider`` does; any other argument without a path
separator or ``.py`` is a spider's ``name``, looked up in the project around the current
directory (``SPIDER_MODULES``), as ``scrapy crawl NAME`` does. Both kinds may be mixed,
as long as they belong to one project.
"""

from __future__ import annotations

import os
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

from skitter.cli._loader import load_spiders, split_target
from skitter.cli._project import Project, find_project, load_project
from skitter.cli._spiders import SpiderLoader
from skitter.exceptions import ConfigError
from skitter.settings import Settings
from skitter.spider import Spider

__all__ = [
    "is_spider_name",
    "named_spider",
    "project_here",
    "project_settings",
    "project_spiders",
    "spiders_for",
]

_PROJECT_FILES = "skitter.toml, pyproject.toml with [tool.skitter], or scrapy.cfg"


def is_spider_name(target: str) -> bool:
    """Whether ``target`` can only be a spider's name: a bare word that is no path."""
    return _bare(target) and not Path(target).exists()


def _bare(target: str) -> bool:
    """A word without a path separator or ``.py``: a spider's name, or a path here."""
    path_part = split_target(target)[0]
    return not (path_part.endswith(".py") or "/" in target or os.sep in target)


def _names(
    targets: Sequence[str], cli: Mapping[str, Any], environ: Mapping[str, str], cwd: Path
) -> tuple[list[str], Project | None, SpiderLoader | None]:
    """Which targets are spider names, their project, and the loader to find them with.

    A bare word that is also a directory here (``quotes``, the project's package, at
    its root) is the spider of that name when the project has one, as ``scrapy crawl``
    would read it; else the directory."""
    names = [target for target in targets if is_spider_name(target)]
    either = [target for target in targets if _bare(target) and target not in names]
    if not names and not (either and find_project(cwd, cwd, environ)):
        return [], None, None
    project = project_here(cwd, environ, f"skitter crawl {' '.join(names or either)}")
    loader = SpiderLoader.from_settings(project_settings(project, environ, cli))
    known = set(loader.list())
    return [t for t in targets if t in names or (t in either and t in known)], project, loader


def project_here(cwd: Path, environ: Mapping[str, str], what: str) -> Project:
    """The project around ``cwd``, loaded; ConfigError saying none was found (for
    ``what``, e.g. "skitter list") otherwise."""
    project = load_project([cwd], cwd, environ)
    if project is None:
        raise ConfigError(
            f"{what}: no project found in {cwd} or above ({_PROJECT_FILES}); "
            "create one with `skitter startproject NAME`, or give a spider file"
        )
    return project


def project_spiders(project: Project | None) -> list[type[Spider]]:
    """Every spider of ``project`` (its SPIDER_MODULES), for the settings check: a name in
    the project's settings that one spider reads is set for it, not refused when another
    runs. A module that fails to import is left out (``crawl NAME`` says why)."""
    if project is None or not project.settings.get("SPIDER_MODULES"):
        return []
    try:
        loader = SpiderLoader.from_settings(project.settings)
    except ConfigError:
        return []
    return [loader.load(name) for name in loader.list()]


def project_settings(
    project: Project | None, environ: Mapping[str, str], cli: Mapping[str, Any]
) -> Settings:
    """The settings a command sees before any spider is chosen: the project's, the
    environment's and the command line's."""
    return Settings.resolve(project.settings if project else None, env=environ, cli=cli)


def named_spider(
    name: str, cli: Mapping[str, Any], environ: Mapping[str, str], cwd: Path
) -> tuple[Project, type[Spider]]:
    """The project around ``cwd`` and its spider ``name``: what a ``--spider NAME``
    option needs. ConfigError when there is no project or no such spider."""
    project = project_here(cwd, environ, f"spider {name!r}")
    loader = SpiderLoader.from_settings(project_settings(project, environ, cli))
    return project, loader.load(name)


def spiders_for(
    targets: Sequence[str], cli: Mapping[str, Any], environ: Mapping[str, str], cwd: Path
) -> tuple[Project | None, list[type[Spider]]]:
    """The project and the spider classes that ``targets`` name, in order."""
    names, project, loader = _names(targets, cli, environ, cwd)
    paths = [Path(split_target(t)[0]) for t in targets if t not in names]
    if not names:
        project = load_project(paths, cwd, environ)
    elif paths:  # files too: they must be of the same project
        load_project([*paths, cwd], cwd, environ)
    classes: list[type[Spider]] = []
    for target in targets:
        if loader is not None and target in names:
            classes.append(loader.load(target))
        else:
            classes.extend(load_spiders(target))
    return project, classes
