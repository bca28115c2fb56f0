"""Callbacks by name: how a request's callback outlives the process that made it.

A stored request (the frontier's wire codec) and a request turned into a dict
(``Request.to_dict``) both carry a callback as the name of a method of the spider, and
get it back by looking the name up on the spider that reads them. Both use these two
functions, so "which callables can be named" has one answer: a method bound to that
very spider, found under a name that is an identifier and not a dunder. That covers a
method under another name (``parse_alt = parse_item``) and a private one (stored as
``_Spider__parse``), and leaves out lambdas, plain functions and other objects'
methods, which no name on the spider gives back. One exception, as in Scrapy: another
object's method that the spider holds as an attribute of its own
(``self.parse_page = helper.parse_page``), delegated work the name gives back.
"""

from __future__ import annotations

import inspect
from collections.abc import Callable
from typing import Any

__all__ = ["method_name", "spider_method"]


def _allowed(name: str) -> bool:
    return name.isidentifier() and not name.startswith("__")


def method_name(func: Callable[..., Any], spider: object | None) -> str | None:
    """The name under which ``spider`` gives back ``func``, or None if there is none."""
    if spider is None:
        return None
    if getattr(func, "__self__", None) is not spider:
        return _delegated(func, spider)
    function = getattr(func, "__func__", None)
    name = getattr(function, "__name__", None)
    if isinstance(name, str) and _allowed(name) and getattr(spider, name, None) == func:
        return name
    # Another name for it: an alias in the class body, or a private (mangled) method.
    for cls in type(spider).__mro__:
        for attr, value in vars(cls).items():
            if value is function and _allowed(attr) and getattr(spider, attr, None) == func:
                return attr
    return None


def spider_method(name: str, spider: object | None) -> Callable[..., Any] | None:
    """The method of ``spider`` called ``name``, or None if ``spider`` has no such method
    (a dunder, another object's method and a non-callable do not count)."""
    if spider is None or not _allowed(name):
        return None
    method = getattr(spider, name, None)
    if method is None or not callable(method):
        return None
    if getattr(method, "__self__", None) is not spider and not (
        inspect.ismethod(method) and vars(spider).get(name) == method
    ):
        return None
    return method  # type: ignore[no-any-return]


def _delegated(func: Callable[..., Any], spider: object) -> str | None:
    """The name of the spider's own attribute that holds ``func``, another object's
    bound method (delegated work), or None."""
    if not inspect.ismethod(func):
        return None
    for attr, value in vars(spider).items() if hasattr(spider, "__dict__") else ():
        if value == func and _allowed(attr):
            return attr
    return None
