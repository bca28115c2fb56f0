"""The project a spider belongs to: its root directory and its settings module.

A Scrapy user runs a spider inside a project and expects its ``settings.py`` to apply;
ignoring it would silently drop ITEM_PIPELINES, DOWNLOAD_DELAY and the rest. A project
is the nearest directory, walking up from the spider file (then from the current
directory), that holds one of, nearest first and in this order within a directory:

- ``skitter.toml`` with a ``[settings]`` table: ``default = "pkg.settings"``;
- ``pyproject.toml`` with ``[tool.skitter]``: ``settings = "pkg.settings"`` (a
  ``pyproject.toml`` without that table is not a project file: the walk goes on);
- Scrapy's ``scrapy.cfg``: ``[settings]`` ``default = pkg.settings``.

As in Scrapy, ``SCRAPY_PROJECT`` (or ``SKITTER_PROJECT``) picks another key than
``default`` of a ``[settings]`` table, and ``SCRAPY_SETTINGS_MODULE`` (or
``SKITTER_SETTINGS_MODULE``, which wins) names the module outright. The root goes on
``sys.path`` so spiders can ``from pkg.items import X``; the module's UPPERCASE names are
the project layer of the settings (below ``custom_settings`` and ``-s``), checked like
every other layer, with the file named in the error.

This reads files and the environment, so it lives at the CLI edge; the library's
``Crawler(settings=...)`` only takes the values. ``skitter crawl NAME``, ``list`` and
``genspider`` find the project around the current directory here, then look spiders up
in its ``SPIDER_MODULES`` (``_spiders.SpiderLoader``).
"""

from __future__ import annotations

import configparser
import dataclasses
import importlib
import sys
import tomllib
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from skitter.exceptions import ConfigError
from skitter.settings import Settings

__all__ = ["Project", "find_project", "load_project"]

_MODULE_VARS = ("SKITTER_SETTINGS_MODULE", "SCRAPY_SETTINGS_MODULE")
_PROJECT_VARS = ("SKITTER_PROJECT", "SCRAPY_PROJECT")


@dataclass(frozen=True, slots=True)
class Project:
    """Where a project is and what configures it.

    ``root`` is None only when an environment variable names the settings module and
    no project file was found; ``origin`` is what named the module (a file or a
    variable); ``settings`` are the module's UPPERCASE names, empty until loaded;
    ``layer`` the same as a crawl's project layer, whose refusals name the file."""

    root: Path | None
    settings_module: str | None
    origin: str
    settings: Mapping[str, Any] = field(default_factory=dict)
    layer: Settings | None = None

    @property
    def name(self) -> str:
        bot_name = self.settings.get("BOT_NAME")
        if isinstance(bot_name, str) and bot_name:
            return bot_name
        if self.root is not None:
            return self.root.name
        return (self.settings_module or "").partition(".")[0]

    def describe(self) -> str:
        """The one line the CLI logs at start."""
        where = f" at {self.root}" if self.root is not None else ""
        if self.settings_module is None:
            return f"Project {self.name!r}{where}: {self.origin} names no settings module"
        return f"Project {self.name!r}{where}: settings {self.settings_module} (from {self.origin})"


def _project_key(environ: Mapping[str, str]) -> str:
    return next((environ[v] for v in _PROJECT_VARS if environ.get(v)), "default")


def _read_toml(path: Path) -> dict[str, Any]:
    try:
        return tomllib.loads(path.read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError, tomllib.TOMLDecodeError) as exc:
        raise ConfigError(f"cannot read {path}: {exc}") from None


def _pick(path: Path, table: Any, key: str, what: str) -> str | None:
    """The module a ``[settings]``-style table names under ``key``."""
    if not isinstance(table, dict):
        raise ConfigError(f"{path}: {what} must be a table of project = module")
    module = table.get(key)
    if module is None:
        if key != "default":  # SCRAPY_PROJECT asked for a project the file lacks
            raise ConfigError(
                f"{path}: {what} has no {key!r} (chosen by SKITTER_PROJECT or SCRAPY_PROJECT)"
            )
        return None
    if not isinstance(module, str) or not module:
        raise ConfigError(f"{path}: {what} {key} must be a module name, got {module!r}")
    return module


def _refuse_unknown(path: Path, table: Mapping[str, Any], known: set[str], what: str) -> None:
    unknown = sorted(set(table) - known)
    if unknown:
        names = ", ".join(map(repr, unknown))
        raise ConfigError(f"{path}: unknown {what} {names} (known: {', '.join(sorted(known))})")


def _skitter_toml(path: Path, key: str) -> Project:
    data = _read_toml(path)
    _refuse_unknown(path, data, {"settings"}, "table")
    module = _pick(path, data["settings"], key, "[settings]") if "settings" in data else None
    return Project(path.parent, module, path.name)


def _pyproject(path: Path, key: str) -> Project | None:
    table = _read_toml(path).get("tool", {}).get("skitter")
    if table is None:
        return None
    if not isinstance(table, dict):
        raise ConfigError(f"{path}: [tool.skitter] must be a table")
    _refuse_unknown(path, table, {"settings"}, "key in [tool.skitter]")
    if key != "default":
        raise ConfigError(
            f"{path}: [tool.skitter] names one settings module; SCRAPY_PROJECT={key} "
            "needs a skitter.toml or scrapy.cfg [settings] table"
        )
    module = table.get("settings")
    if module is not None and (not isinstance(module, str) or not module):
        raise ConfigError(f"{path}: [tool.skitter] settings must be a module name")
    return Project(path.parent, module, f"{path.name} [tool.skitter]")


def _scrapy_cfg(path: Path, key: str) -> Project:
    parser = configparser.ConfigParser()
    try:
        parser.read(path, encoding="utf-8")
    except (configparser.Error, UnicodeDecodeError) as exc:
        raise ConfigError(f"cannot read {path}: {exc}") from None
    table = dict(parser["settings"]) if parser.has_section("settings") else {}
    return Project(path.parent, _pick(path, table, key, "[settings]"), path.name)


def _at(directory: Path, key: str) -> Project | None:
    for name, read in (
        ("skitter.toml", _skitter_toml),
        ("pyproject.toml", _pyproject),
        ("scrapy.cfg", _scrapy_cfg),
    ):
        path = directory / name
        if path.is_file():
            project = read(path, key)
            if project is not None:
                return project
    return None


def _walk(start: Path, key: str) -> Project | None:
    start = start.resolve()
    for directory in (start, *start.parents):
        project = _at(directory, key)
        if project is not None:
            return project
    return None


def find_project(start: Path, cwd: Path, environ: Mapping[str, str]) -> Project | None:
    """The project of what lives in ``start`` (a directory), without importing anything.

    Walks up from ``start``, then from ``cwd``; a settings module named in the
    environment overrides the project file's (its root still goes on ``sys.path``).
    """
    key = _project_key(environ)
    found = _walk(start, key) or _walk(cwd, key)
    variable = next((v for v in _MODULE_VARS if environ.get(v)), None)
    if variable is None:
        return found
    return Project(found.root if found else None, environ[variable], variable)


def _module_settings(project: Project) -> Project:
    """The project with its settings module imported and its names checked."""
    if project.root is not None and str(project.root) not in sys.path:
        sys.path.append(str(project.root))  # as Scrapy does: installed packages win
    if project.settings_module is None:
        return project
    try:
        module = importlib.import_module(project.settings_module)
    except Exception as exc:
        raise ConfigError(
            f"cannot import the settings module {project.settings_module} named by "
            f"{project.origin}: {type(exc).__name__}: {exc}"
        ) from None
    values = {name: getattr(module, name) for name in dir(module) if name.isupper()}
    named = Project(project.root, project.settings_module, project.origin, values)
    file = Path(getattr(module, "__file__", None) or project.settings_module)
    if project.root is not None and file.is_relative_to(project.root):
        file = file.relative_to(project.root)
    layer = Settings(values, origin=f"{file} of project {named.name!r}")  # refuses what must be
    return dataclasses.replace(named, layer=layer)


def load_project(paths: Sequence[Path], cwd: Path, environ: Mapping[str, str]) -> Project | None:
    """The one project of the spiders at ``paths`` (files or directories), loaded.

    Spiders of two projects in one run are refused: ``sys.path`` and the imported
    settings module are the process's, so only one project can hold.
    """
    found: dict[tuple[Path | None, str | None], Project] = {}
    for path in paths:
        start = path if path.is_dir() else path.parent
        project = find_project(start, cwd, environ)
        if project is not None:
            found.setdefault((project.root, project.settings_module), project)
    if len(found) > 1:
        roots = " and ".join(str(p.root or p.settings_module) for p in found.values())
        raise ConfigError(f"spiders of two projects in one run ({roots}): run them separately")
    if not found:
        return None
    return _module_settings(next(iter(found.values())))
