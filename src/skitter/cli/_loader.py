"""Finding spider classes in files: ``spider.py``, ``spider.py:Name``, or a directory.

Each file is imported under a module name of its own (derived from its path), so two
spider files both called ``spider.py`` in different directories do not collide, and the
file's directory is put on ``sys.path`` so it can import its neighbours, as ``scrapy
runspider`` users expect. Their parent, ``_skitter_spiders``, is an empty package in
``sys.modules``, so that what a spider file defines (an item class) can be pickled and
unpickled by name: the workers of ``--processes`` send items to the coordinator so.
"""

from __future__ import annotations

import hashlib
import importlib.util
import inspect
import sys
import types
from pathlib import Path

from skitter.exceptions import ConfigError
from skitter.spider import Spider

__all__ = ["load_spiders", "spiders_in", "split_target"]

#: The package the spider files are imported under.
_PARENT = "_skitter_spiders"


def _import_file(path: Path) -> object:
    digest = hashlib.sha1(str(path).encode(), usedforsecurity=False).hexdigest()[:10]
    name = f"{_PARENT}.{path.stem}_{digest}"
    sys.modules.setdefault(_PARENT, types.ModuleType(_PARENT))
    if name in sys.modules:
        return sys.modules[name]
    spec = importlib.util.spec_from_file_location(name, path)
    if spec is None or spec.loader is None:
        raise ConfigError(f"cannot import {path}")
    module = importlib.util.module_from_spec(spec)
    parent = str(path.parent)
    if parent not in sys.path:
        sys.path.insert(0, parent)
    sys.modules[name] = module
    try:
        spec.loader.exec_module(module)
    except Exception as exc:
        del sys.modules[name]
        raise ConfigError(f"error while importing {path}: {type(exc).__name__}: {exc}") from exc
    return module


def spiders_in(module: object) -> list[type[Spider]]:
    found = []
    for _, obj in inspect.getmembers(module, inspect.isclass):
        if (
            issubclass(obj, Spider)
            and obj is not Spider
            and obj.__module__ == getattr(module, "__name__", None)
        ):
            found.append(obj)
    return found


def split_target(target: str) -> tuple[str, str]:
    """``spider.py:Name`` as its path and the spider's name (empty when not given)."""
    path_part, _, wanted = target.partition(":")
    if len(path_part) == 1 and wanted and "\\" in target:  # C:\... on Windows
        return target, ""
    return path_part, wanted


def load_spiders(target: str) -> list[type[Spider]]:
    """The spider classes named by ``target``.

    ``file.py`` must define exactly one spider (or name it: ``file.py:Name``, matching
    the class name or its ``name`` attribute); a directory yields one spider per file.
    """
    path_part, wanted = split_target(target)
    path = Path(path_part).resolve()
    if path.is_dir():
        out: list[type[Spider]] = []
        for file in sorted(path.glob("*.py")):
            if not file.name.startswith("_"):
                out.extend(spiders_in(_import_file(file)))
        if not out:
            raise ConfigError(f"no spider classes in {path}")
        return out
    if not path.is_file():
        raise ConfigError(f"no such spider file: {path_part}")
    spiders = spiders_in(_import_file(path))
    if wanted:
        matches = [s for s in spiders if wanted in (s.__name__, s.name)]
        if not matches:
            names = ", ".join(s.__name__ for s in spiders) or "none"
            raise ConfigError(f"no spider {wanted!r} in {path_part} (found: {names})")
        return matches[:1]
    if not spiders:
        raise ConfigError(f"no Spider subclass in {path_part}")
    if len(spiders) > 1:
        names = ", ".join(s.__name__ for s in spiders)
        raise ConfigError(
            f"{path_part} defines several spiders ({names}); choose one with {path_part}:Name"
        )
    return spiders
