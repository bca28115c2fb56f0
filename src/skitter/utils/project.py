"""Scrapy's ``scrapy.utils.project``: where a project keeps its data (``data_path``).

Plug-ins store their state with ``data_path`` (scrapy-deltafetch's database of pages
already scraped, for one): a relative path lands in ``.scrapy/`` beside the project file
(``scrapy.cfg`` or ``skitter.toml``, the nearest one up from the current directory), or
in ``./.scrapy/`` outside a project, as in Scrapy. The folder keeps Scrapy's name on
purpose: a project moved from Scrapy finds the state its plug-ins saved there.
"""

from __future__ import annotations

import os
from pathlib import Path

from skitter.exceptions import NotConfigured

__all__ = ["data_path", "inside_project", "project_data_dir"]

_PROJECT_FILES = ("scrapy.cfg", "skitter.toml")
_DATA_DIR = ".scrapy"
_SETTINGS_VARS = ("SKITTER_SETTINGS_MODULE", "SCRAPY_SETTINGS_MODULE")


def _project_root(start: Path | None = None) -> Path | None:
    """The nearest directory, from ``start`` (the current one) up, with a project file."""
    here = (start or Path.cwd()).resolve()
    for directory in (here, *here.parents):
        if any((directory / name).is_file() for name in _PROJECT_FILES):
            return directory
    return None


def inside_project() -> bool:
    """Whether the process runs in a project: a settings module named in the environment,
    or a project file in the current directory or above it."""
    return any(os.environ.get(name) for name in _SETTINGS_VARS) or _project_root() is not None


def project_data_dir(project: str = "default") -> str:
    """The project's data folder (``.scrapy`` beside its project file), created if missing.

    ``project`` is accepted for Scrapy's signature; every key of a project file shares
    the one folder, as in Scrapy when ``[datadir]`` is not set."""
    root = _project_root()
    if root is None:
        raise NotConfigured("not inside a project (no scrapy.cfg or skitter.toml found)")
    path = root / _DATA_DIR
    path.mkdir(parents=True, exist_ok=True)
    return str(path)


def data_path(path: str | os.PathLike[str], createdir: bool = False) -> str:
    """``path`` made absolute: as given when absolute, else in the project's data folder
    (``./.scrapy`` outside a project); the folder is made when ``createdir``."""
    given = Path(path)
    if not given.is_absolute():
        root = _project_root()
        base = Path(project_data_dir()) if root is not None else Path(_DATA_DIR).absolute()
        given = base / given
    if createdir:
        given.mkdir(parents=True, exist_ok=True)
    return str(given)
