"""The setting names a component's code reads, found in its compiled code.

A Scrapy component reads its own settings by name, ``crawler.settings.getint("MYEXT_LIMIT")``
in ``from_crawler`` or ``self.settings["API_KEY"]`` in a callback, and was never written
to declare them. Those names are string constants of its code objects, so they can be
found without running anything and without the source (a ``.pyc`` is enough): the
constants of every function of the class and of its bases, of the functions and
classes those name as globals (helpers of the same module, a plug-in's base class),
the functions they reach through a module named as a global (``connection.from_settings``
where ``connection`` is the plug-in's module), and the strings they name as globals
(``KEY = "API_KEY"``, or the keys of a global dict ``{"REDIS_URL": "url"}`` that a helper
reads settings by), a few calls deep.

Only strings that look like a setting name (upper case, words joined by ``_``) are
kept. skitter's own classes, the standard library's and builtins are not walked: every
name they read is in the registry. A name built at run time (``prefix + "_LIST"``) is
not found; such a component declares it (``declared_settings``).
"""

from __future__ import annotations

import functools
import re
import sys
from types import CodeType, FunctionType, ModuleType
from typing import Any

__all__ = ["names_in_code"]

_NAME = re.compile(r"[A-Z][A-Z0-9]*(?:_[A-Z0-9]+)*")

#: How many globals deep the walk follows: a method (0) calls a helper (1) that calls
#: another (2). Enough for the ways components read settings; bounded, so a reference to
#: a large library does not walk all of it.
_DEPTH = 2


def _not_walked(obj: Any) -> bool:
    """skitter's own code (its names are registered), the standard library's, builtins."""
    module = getattr(obj, "__module__", None) or ""
    top = module.partition(".")[0]
    return top in ("skitter", "builtins") or top in sys.stdlib_module_names


class _Walk:
    """One walk: the names found, and what was already visited (cycles, shared helpers)."""

    def __init__(self) -> None:
        self.names: set[str] = set()
        self._seen: set[int] = set()

    def _first_visit(self, obj: object) -> bool:
        if id(obj) in self._seen:
            return False
        self._seen.add(id(obj))
        return True

    def string(self, value: str) -> None:
        if _NAME.fullmatch(value):
            self.names.add(value)

    def constant(self, value: object, namespace: dict[str, Any], depth: int) -> None:
        if isinstance(value, str):
            self.string(value)
        elif isinstance(value, tuple | frozenset):
            for item in value:
                self.constant(item, namespace, depth)
        elif isinstance(value, CodeType):
            self.code(value, namespace, depth)

    def code(self, code: CodeType, namespace: dict[str, Any], depth: int) -> None:
        if not self._first_visit(code):
            return
        for value in code.co_consts:
            self.constant(value, namespace, depth)
        if depth < _DEPTH:
            for name in code.co_names:
                value = namespace.get(name)
                if isinstance(value, ModuleType):
                    self.module(value, code.co_names, depth + 1)
                else:
                    self.global_(value, depth + 1)

    def module(self, module: ModuleType, names: tuple[str, ...], depth: int) -> None:
        """The attributes of ``module`` that the code names (``module.helper(...)``: both
        names are in the code's names; which attribute goes with it is not recorded)."""
        top = module.__name__.partition(".")[0]
        if top in ("skitter", "builtins") or top in sys.stdlib_module_names:
            return
        members = vars(module)
        for name in names:
            if name in members and not isinstance(members[name], ModuleType):
                self.global_(members[name], depth)

    def global_(self, value: object, depth: int) -> None:
        """What a function names as a global: a string, a dict's string keys (a table of
        setting names the function reads by), a function or a class."""
        if isinstance(value, str):
            self.string(value)
        elif isinstance(value, dict):
            for key in value:
                if isinstance(key, str):
                    self.string(key)
        elif isinstance(value, type):
            self.cls(value, depth)
        elif callable(value):
            self.function(value, depth)

    def function(self, func: Any, depth: int) -> None:
        while hasattr(func, "__wrapped__"):  # functools.wraps: the code that runs is inside
            func = func.__wrapped__
        if isinstance(func, FunctionType) and not _not_walked(func):
            self.code(func.__code__, func.__globals__, depth)

    def member(self, value: object, depth: int) -> None:
        """A class attribute: a method (plain, class, static, property), a string or a
        list of strings (``required = ["API_KEY"]``). Never a dict: ``custom_settings``
        sets names, it does not read them."""
        if isinstance(value, staticmethod | classmethod):
            value = value.__func__
        elif isinstance(value, functools.cached_property):
            value = value.func
        if isinstance(value, property):
            for accessor in (value.fget, value.fset, value.fdel):
                if accessor is not None:
                    self.function(accessor, depth)
        elif isinstance(value, str):
            self.string(value)
        elif isinstance(value, list | tuple | set | frozenset):  # not a dict: custom_settings
            for item in value:
                if isinstance(item, str):
                    self.string(item)
        elif callable(value) and not isinstance(value, type):
            self.function(value, depth)

    def cls(self, cls: type, depth: int) -> None:
        for klass in cls.__mro__:
            if _not_walked(klass) or not self._first_visit(klass):
                continue
            for value in vars(klass).values():
                self.member(value, depth)


def names_in_code(obj: object) -> frozenset[str]:
    """The setting-like strings that the code of ``obj`` (a class, an instance's class
    or a function) and what it calls by global name hold."""
    walk = _Walk()
    walk.global_(obj if isinstance(obj, type | FunctionType) else type(obj), 0)
    return frozenset(walk.names)
