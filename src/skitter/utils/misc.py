"""Scrapy's ``scrapy.utils.misc``: loading objects by path and building components."""

from __future__ import annotations

import importlib
import os
import pkgutil
from collections.abc import Iterable, Iterator
from contextlib import contextmanager
from types import ModuleType
from typing import Any

from skitter._components import load_object
from skitter.items import is_item

__all__ = ["arg_to_iter", "build_from_crawler", "load_object", "set_environ", "walk_modules"]


def arg_to_iter(arg: Any) -> Iterable[Any]:
    """``arg`` as an iterable: None is empty, a single value (a str, bytes, dict or
    item included) is a one-element list, other iterables are themselves."""
    if arg is None:
        return []
    if isinstance(arg, str | bytes | dict) or not hasattr(arg, "__iter__"):
        return [arg]
    return [arg] if is_item(arg) else arg


def build_from_crawler(objcls: type[Any], crawler: Any, /, *args: Any, **kwargs: Any) -> Any:
    """An instance of ``objcls``, through ``objcls.from_crawler(crawler, ...)`` when it
    has one, else ``objcls(...)``; a ``from_crawler`` that returns None is a TypeError."""
    from_crawler = getattr(objcls, "from_crawler", None)
    if from_crawler is None:
        return objcls(*args, **kwargs)
    instance = from_crawler(crawler, *args, **kwargs)
    if instance is None:
        raise TypeError(f"{objcls.__qualname__}.from_crawler returned None")
    return instance


def walk_modules(path: str) -> list[ModuleType]:
    """The module at ``path`` and, for a package, every module below it, imported (an
    import error propagates: a spider module that does not import is not skipped)."""
    module = importlib.import_module(path)
    below = pkgutil.walk_packages(getattr(module, "__path__", []), prefix=f"{path}.")
    return [module, *(importlib.import_module(info.name) for info in below)]


@contextmanager
def set_environ(**kwargs: str) -> Iterator[None]:
    """Environment variables set for the ``with`` block, restored (or removed) after."""
    saved = {name: os.environ.get(name) for name in kwargs}
    os.environ.update(kwargs)
    try:
        yield
    finally:
        for name, value in saved.items():
            if value is None:
                os.environ.pop(name, None)
            else:
                os.environ[name] = value
