"""``import scrapy`` resolving to skitter: run a Scrapy project, or its tests, unedited.

Opt-in, never implicit: ``skitter --scrapy-alias ...``, ``SKITTER_SCRAPY_ALIAS=1`` for the
``skitter`` command, or ``python -m skitter.scrapy_alias [-m MODULE | SCRIPT] [ARGS]`` for
any other program (``python -m skitter.scrapy_alias -m pytest tests/``).

When on, ``scrapy`` is the ``skitter`` module and ``scrapy.X`` is ``skitter.X``: the same
module objects, so a class imported under either name is one class. Nothing is made up: a
``scrapy.X`` exists only where ``skitter.X`` does; any other name fails as a missing module
would, rather than falling through to a second copy of skitter's files under another name.

Log records follow the modules: while it is on, a record from a ``skitter`` or ``skitter.X``
logger carries the name ``scrapy`` / ``scrapy.X`` (``record.name``), the name a Scrapy
project's log filters and tests look for. The loggers themselves keep their names.

It says so on stderr once, when it is turned on. If the real Scrapy is installed it is
shadowed for the whole process (the notice names it); if the real Scrapy was *already
imported* the alias is refused, since half of a program would then hold Scrapy's classes
and half skitter's.
"""

from __future__ import annotations

import importlib
import importlib.abc
import importlib.machinery
import importlib.util
import logging
import os
import runpy
import sys
from collections.abc import Callable, Sequence
from types import ModuleType
from typing import Any, TextIO

__all__ = ["ENV_VAR", "enabled_by_env", "install", "installed", "main", "uninstall"]

#: The environment variable that turns the alias on for the ``skitter`` command.
ENV_VAR = "SKITTER_SCRAPY_ALIAS"

_ALIAS, _TARGET = "scrapy", "skitter"


def _target_name(fullname: str) -> str | None:
    """``scrapy.x.y`` -> ``skitter.x.y``; None for names outside the alias."""
    if fullname == _ALIAS:
        return _TARGET
    if fullname.startswith(_ALIAS + "."):
        return _TARGET + fullname[len(_ALIAS) :]
    return None


class _AliasLoader(importlib.abc.Loader):
    """Puts the skitter module itself in ``sys.modules`` under the Scrapy name.

    The import system reads ``sys.modules`` again after ``exec_module``, so the placeholder
    it made is replaced by skitter's module, whose own ``__spec__`` stays untouched.
    """

    def __init__(self, target: str) -> None:
        self._target = target

    def create_module(self, spec: importlib.machinery.ModuleSpec) -> ModuleType | None:
        return None  # a throwaway placeholder; exec_module swaps it out

    def exec_module(self, module: ModuleType) -> None:
        sys.modules[module.__name__] = importlib.import_module(self._target)


class _ScrapyAliasFinder(importlib.abc.MetaPathFinder):
    """First on ``sys.meta_path`` while the alias is on; answers only for ``scrapy``.

    ``hidden`` makes ``scrapy`` missing for a moment: itemadapter asks for Scrapy's Item
    when it is first imported, which would be skitter's ``item`` module half-way through
    its own import (it subclasses itemadapter's interface); skitter registers its Item
    with itemadapter itself.
    """

    hidden = False

    def find_spec(
        self,
        fullname: str,
        path: Sequence[str] | None = None,
        target: ModuleType | None = None,
    ) -> importlib.machinery.ModuleSpec | None:
        name = _target_name(fullname)
        if name is None:
            return None
        if self.hidden:
            raise ModuleNotFoundError(f"No module named {fullname!r}", name=fullname)
        if name not in sys.modules and importlib.util.find_spec(name) is None:
            # Raising here (not returning None) keeps the next finders from loading
            # skitter's files a second time under the Scrapy name.
            raise ModuleNotFoundError(
                f"No module named {fullname!r}: the Scrapy alias maps it to {name!r}, "
                "which skitter does not have",
                name=fullname,
            )
        return importlib.machinery.ModuleSpec(fullname, _AliasLoader(name))


_finder: _ScrapyAliasFinder | None = None
_RecordFactory = Callable[..., logging.LogRecord]
_record_factory: _RecordFactory | None = None
"""The record factory the alias wrapped, put back by ``uninstall``."""


def _scrapy_record_names(
    make: Callable[..., logging.LogRecord],
) -> Callable[..., logging.LogRecord]:
    """A record factory over ``make`` that names skitter's records by Scrapy's prefix."""

    def factory(*args: Any, **kwargs: Any) -> logging.LogRecord:
        record = make(*args, **kwargs)
        name = record.name
        if name == _TARGET or name.startswith(_TARGET + "."):
            record.name = _ALIAS + name[len(_TARGET) :]
        return record

    return factory


def installed() -> bool:
    """Whether ``import scrapy`` resolves to skitter in this process."""
    return _finder is not None


def enabled_by_env(environ: dict[str, str] | os._Environ[str] = os.environ) -> bool:
    """``SKITTER_SCRAPY_ALIAS`` set to a true value; other values are refused, not ignored."""
    value = environ.get(ENV_VAR, "").strip().lower()
    if value in ("", "0", "false", "no", "off"):
        return False
    if value in ("1", "true", "yes", "on"):
        return True
    raise ValueError(f"{ENV_VAR}={environ[ENV_VAR]!r}: use 1 to turn the alias on, 0 for off")


def _real_scrapy_location() -> str | None:
    """Where an installed Scrapy would have been imported from (None when there is none)."""
    spec = importlib.machinery.PathFinder.find_spec(_ALIAS)
    return None if spec is None else (spec.origin or "a namespace package")


def install(notice: TextIO | None = None) -> None:
    """Turn the alias on for this process (a second call does nothing).

    Refused when the real Scrapy is already imported. The notice goes to ``notice``
    (stderr by default): an alias is not something to find out about from a traceback.
    """
    global _finder
    if _finder is not None:
        return
    loaded = sys.modules.get(_ALIAS)
    if loaded is not None:
        raise RuntimeError(
            f"the Scrapy alias cannot be turned on: the real Scrapy is already imported "
            f"({getattr(loaded, '__file__', loaded)!r}); turn the alias on before anything "
            "imports scrapy, or run without it"
        )
    real = _real_scrapy_location()
    global _record_factory
    _record_factory = logging.getLogRecordFactory()
    logging.setLogRecordFactory(_scrapy_record_names(_record_factory))
    _finder = _ScrapyAliasFinder()
    sys.meta_path.insert(0, _finder)
    _finder.hidden = "itemadapter" not in sys.modules
    try:
        importlib.import_module("itemadapter")
    finally:
        _finder.hidden = False
    from skitter._version import __version__

    shadowed = f"; the installed Scrapy ({real}) is shadowed" if real else ""
    print(
        f"skitter: Scrapy alias on: 'import scrapy' loads skitter {__version__}{shadowed}",
        file=notice or sys.stderr,
    )


def uninstall() -> None:
    """Turn the alias off and forget the ``scrapy`` names it gave (for tests and tools)."""
    global _finder
    if _finder is None:
        return
    sys.meta_path.remove(_finder)
    _finder = None
    global _record_factory
    if _record_factory is not None:
        logging.setLogRecordFactory(_record_factory)
        _record_factory = None
    for name in [n for n in sys.modules if _target_name(n) is not None]:
        del sys.modules[name]


_USAGE = "usage: python -m skitter.scrapy_alias (-m MODULE | SCRIPT) [ARGS...]"


def main(argv: Sequence[str] | None = None) -> None:
    """Run a module (``-m``) or a script with the alias on, as ``python`` itself would."""
    args = list(sys.argv[1:] if argv is None else argv)
    if not args or args[0] in ("-h", "--help") or (args[0] == "-m" and len(args) < 2):
        raise SystemExit(_USAGE)
    install()
    if args[0] == "-m":
        sys.argv = [args[1], *args[2:]]
        runpy.run_module(args[1], run_name="__main__", alter_sys=True)
    else:
        sys.argv = args
        runpy.run_path(args[0], run_name="__main__")


if __name__ == "__main__":
    # Run as ``python -m``, this file is ``__main__``: hand over to the importable module,
    # so ``installed()`` and the finder are the ones the rest of the program sees.
    from skitter.scrapy_alias import main as _main

    _main()
