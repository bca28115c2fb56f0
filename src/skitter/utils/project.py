"""Scrapy's ``scrapy.utils.project``: the project around the current directory.

Plug-ins store their state with ``data_path`` (scrapy-deltafetch's database of pages
already scraped, for one): a relative path lands in ``.scrapy/`` beside the project file
(``scrapy.cfg`` or ``skitter.toml``, the nearest one up from the current directory), in
the folder a ``[datadir]`` section of ``scrapy.cfg`` names, or in ``.scrapy/`` of the
current directory outside a project, as in Scrapy. The folder keeps Scrapy's name on
purpose: a project moved from Scrapy finds the state its plug-ins saved there.

``get_project_settings`` is what scripts that run a crawler from a project call (the
``CrawlerProcess(get_project_settings())`` idiom): the settings module named by
``SCRAPY_SETTINGS_MODULE`` (or ``SKITTER_SETTINGS_MODULE``), or else by the
``[settings]`` section of the nearest project file, at the project priority.
"""

from __future__ import annotations

import configparser
import os
import sys
import tomllib
import warnings
from importlib import import_module
from pathlib import Path

from skitter.exceptions import NotConfigured
from skitter.settings import Settings

__all__ = ["data_path", "get_project_settings", "inside_project", "project_data_dir"]

_PROJECT_FILES = ("scrapy.cfg", "skitter.toml")
_DATA_DIR = ".scrapy"
_SETTINGS_VARS = ("SKITTER_SETTINGS_MODULE", "SCRAPY_SETTINGS_MODULE")
_SCRAPY_VAR = "SCRAPY_SETTINGS_MODULE"
#: The ``SCRAPY_*`` variables that become settings (without the prefix), as in Scrapy;
#: any other ``SCRAPY_*`` variable is not a setting.
_ENV_SETTINGS = ("CHECK", "PROJECT", "PYTHON_SHELL", "SETTINGS_MODULE")


def _project_file(start: Path | None = None) -> Path | None:
    """The nearest project file, from ``start`` (the current directory) up."""
    here = (start or Path.cwd()).resolve()
    for directory in (here, *here.parents):
        for name in _PROJECT_FILES:
            if (directory / name).is_file():
                return directory / name
    return None


def _settings_module_name() -> str | None:
    return next((os.environ[name] for name in _SETTINGS_VARS if os.environ.get(name)), None)


def inside_project() -> bool:
    """Whether the process runs in a project: an importable settings module named in the
    environment, or a project file in the current directory or above it.

    A module that cannot be imported is warned about (a typo in the variable would
    otherwise go unnoticed) and the project file decides."""
    module = _settings_module_name()
    if module:
        try:
            import_module(module)
        except ImportError as exc:
            warnings.warn(f"Cannot import scrapy settings module {module}: {exc}", stacklevel=2)
        else:
            return True
    return _project_file() is not None


def _config() -> configparser.ConfigParser:
    """Scrapy's ``scrapy.cfg`` files merged: the system's, the user's, the project's."""
    xdg = os.environ.get("XDG_CONFIG_HOME") or str(Path("~/.config").expanduser())
    sources = ["/etc/scrapy.cfg", str(Path(xdg) / "scrapy.cfg")]
    sources.append(str(Path("~/.scrapy.cfg").expanduser()))
    found = _project_file()
    if found is not None and found.name == "scrapy.cfg":
        sources.append(str(found))
    config = configparser.ConfigParser()
    config.read(sources)
    return config


def project_data_dir(project: str = "default") -> str:
    """The project's data folder, created if missing: the ``[datadir]`` entry of
    ``scrapy.cfg`` for ``project``, else ``.scrapy`` beside the project file."""
    if not inside_project():
        raise NotConfigured("Not inside a project (no scrapy.cfg or skitter.toml found)")
    config = _config()
    if config.has_option("datadir", project):
        path = Path(config.get("datadir", project))
    else:
        found = _project_file()
        if found is None:
            raise NotConfigured(
                "Unable to find scrapy.cfg file (or skitter.toml) to infer the project's "
                "data dir: the settings module named in the environment is not enough"
            )
        path = found.parent / _DATA_DIR
    path.mkdir(parents=True, exist_ok=True)
    return str(path)


def data_path(path: str | os.PathLike[str], createdir: bool = False) -> str:
    """``path`` as given when absolute, else in the project's data folder, or in
    ``.scrapy`` (relative, as in Scrapy) outside a project; the folder is made when
    ``createdir``."""
    given = Path(path)
    if not given.is_absolute():
        given = Path(project_data_dir(), given) if inside_project() else Path(_DATA_DIR, given)
    if createdir:
        given.mkdir(parents=True, exist_ok=True)
    return str(given)


def _module_from_project_file() -> None:
    """Scrapy's ``init_env``: name the settings module of the nearest project file in
    ``SCRAPY_SETTINGS_MODULE`` and put the project's folder on ``sys.path``."""
    key = os.environ.get("SCRAPY_PROJECT", "default")
    found = _project_file()
    if found is not None and found.name == "skitter.toml":
        table = tomllib.loads(found.read_text(encoding="utf-8")).get("settings", {})
        if isinstance(table, dict) and isinstance(table.get(key), str):
            os.environ[_SCRAPY_VAR] = table[key]
    else:
        config = _config()
        if config.has_option("settings", key):
            os.environ[_SCRAPY_VAR] = config.get("settings", key)
    if found is not None and str(found.parent) not in sys.path:
        sys.path.append(str(found.parent))


def get_project_settings() -> Settings:
    """The settings of the project around the current directory, at project priority,
    with the ``SCRAPY_*`` variables that are settings (``SCRAPY_SETTINGS_MODULE`` ...)."""
    if _settings_module_name() is None:
        _module_from_project_file()
    settings = Settings()
    module = _settings_module_name()
    if module:
        settings.setmodule(module, priority="project")
    from_env = {
        name: os.environ[f"SCRAPY_{name}"]
        for name in _ENV_SETTINGS
        if f"SCRAPY_{name}" in os.environ
    }
    settings.setdict(from_env, priority="project")
    return settings
