"""A project's spiders by name: what ``skitter crawl NAME`` and ``skitter list`` search.

Scrapy users run ``scrapy crawl quotes`` inside a project; the spider is found by its
``name`` among the classes defined in the modules under ``SPIDER_MODULES`` (each a
module or a package, walked recursively). ``SpiderLoader`` is that index, built once:

    loader = SpiderLoader.from_settings(settings)   # imports every spider module
    loader.list()                                   # the names, sorted
    loader.load("quotes")                           # the class, or ConfigError

Unlike Scrapy, which warns, two spiders with one name are an error naming both classes:
``crawl NAME`` would otherwise run whichever was imported last. A module that fails to
import is an error too, unless ``SPIDER_LOADER_WARN_ONLY`` (Scrapy's meaning: log a
warning and go on without it). Any command taking ``--spider NAME`` uses ``load``.
"""

from __future__ import annotations

import importlib
import logging
import pkgutil
from collections.abc import Iterator, Mapping, Sequence
from types import ModuleType
from typing import Any

from skitter.cli._loader import spiders_in
from skitter.exceptions import ConfigError
from skitter.spider import Spider

__all__ = ["SpiderLoader"]

log = logging.getLogger("skitter.cli")


def _where(cls: type[Spider]) -> str:
    return f"{cls.__module__}.{cls.__qualname__}"


class SpiderLoader:
    """The spiders of ``modules`` (dotted names, importable: the project root is on
    ``sys.path``), indexed by their ``name``; raises ConfigError at construction on an
    import error (unless ``warn_only``) or a name used twice."""

    def __init__(self, modules: Sequence[str], *, warn_only: bool = False) -> None:
        self.modules = list(modules)
        self._spiders: dict[str, type[Spider]] = {}
        for module_name in self.modules:
            for module in self._walk(module_name, warn_only):
                for cls in spiders_in(module):
                    if cls.name:
                        self._add(cls)

    @classmethod
    def from_settings(cls, settings: Mapping[str, Any]) -> SpiderLoader:
        """The loader for ``SPIDER_MODULES`` and ``SPIDER_LOADER_WARN_ONLY``."""
        modules = settings.get("SPIDER_MODULES") or []
        if isinstance(modules, str):  # Scrapy's getlist: "a.spiders,b.spiders"
            modules = [part.strip() for part in modules.split(",") if part.strip()]
        return cls(modules, warn_only=bool(settings.get("SPIDER_LOADER_WARN_ONLY", False)))

    def _walk(self, name: str, warn_only: bool) -> Iterator[ModuleType]:
        module = self._import(name, warn_only)
        if module is None:
            return
        yield module
        if hasattr(module, "__path__"):  # a package: every module under it
            prefix = module.__name__ + "."
            for info in pkgutil.walk_packages(module.__path__, prefix, onerror=lambda _: None):
                sub = self._import(info.name, warn_only)
                if sub is not None:
                    yield sub

    @staticmethod
    def _import(name: str, warn_only: bool) -> ModuleType | None:
        try:
            return importlib.import_module(name)
        except Exception as exc:
            message = f"cannot import the spider module {name}: {type(exc).__name__}: {exc}"
            if not warn_only:
                raise ConfigError(
                    f"{message} (SPIDER_MODULES; SPIDER_LOADER_WARN_ONLY=True skips it)"
                ) from None
            log.warning("%s; its spiders are left out (SPIDER_LOADER_WARN_ONLY)", message)
            return None

    def _add(self, cls: type[Spider]) -> None:
        name = str(cls.name)
        other = self._spiders.get(name)
        if other is not None and other is not cls:
            raise ConfigError(
                f"two spiders are named {name!r}: {_where(other)} and {_where(cls)}; "
                "rename one (a spider's name must be unique in its project)"
            )
        self._spiders[name] = cls

    def list(self) -> list[str]:
        """The spiders' names, sorted."""
        return sorted(self._spiders)

    def load(self, name: str) -> type[Spider]:
        """The spider class named ``name``; ConfigError listing the names otherwise."""
        try:
            return self._spiders[name]
        except KeyError:
            pass
        if not self.modules:
            raise ConfigError(f"no spider named {name!r}: the project sets no SPIDER_MODULES")
        names = ", ".join(self.list()) or "none"
        where = ", ".join(self.modules)
        raise ConfigError(f"no spider named {name!r} in {where} (spiders: {names})")
