"""Callbacks as configuration: pyspider's ``@every`` and ``@config``.

``@every(minutes=..., seconds=...)`` marks a spider method to be run periodically in
serve mode (pyspider's cron jobs: typically one that yields the index pages again).
``@config(age=..., priority=...)`` gives defaults to every request whose callback is
the decorated method, so the knowledge "detail pages are fresh for ten days" sits on
the method that parses them::

    class News(Spider):
        @every(minutes=24 * 60)
        def refresh(self):
            yield Request("https://example.com/", callback=self.parse_index)

        @config(age=10 * 24 * 3600, priority=2)
        def parse_detail(self, response): ...

The decorators only mark the function (attributes ``__skitter_every__`` and
``__skitter_config__``); the engine reads the marks with ``periodic_methods`` and
``callback_config``. Names are checked when the class is defined, so a typo such as
``@config(retires=5)`` fails at import, not silently at the ten-thousandth page.
"""

from __future__ import annotations

import difflib
import math
from collections.abc import Callable, Mapping
from types import MappingProxyType
from typing import Any, TypeVar

__all__ = [
    "CONFIG_FIELDS",
    "apply_callback_config",
    "callback_config",
    "config",
    "every",
    "has_config_callbacks",
    "periodic_methods",
]

F = TypeVar("F", bound=Callable[..., Any])

EVERY_ATTR = "__skitter_every__"
CONFIG_ATTR = "__skitter_config__"


def _number(value: Any) -> bool:
    return isinstance(value, int | float) and not isinstance(value, bool)


def _check_age(value: Any) -> str | None:
    if not _number(value) or not (value == -1 or value >= 0):
        return "a number of seconds >= 0, or -1 for never"
    return None


def _check_priority(value: Any) -> str | None:
    return None if isinstance(value, int) and not isinstance(value, bool) else "an int"


def _check_retries(value: Any) -> str | None:
    if value is None or (isinstance(value, int) and not isinstance(value, bool) and value >= 0):
        return None
    return "an int >= 0 (or None for the RETRY_TIMES setting)"


def _check_itag(value: Any) -> str | None:
    return None if value is None or isinstance(value, str) else "a str or None"


def _check_bool(value: Any) -> str | None:
    return None if isinstance(value, bool) else "True or False"


def _check_mapping(value: Any) -> str | None:
    return None if isinstance(value, Mapping) else "a mapping"


#: The request fields ``@config`` may set, each with a check of its value.
CONFIG_FIELDS: Mapping[str, Callable[[Any], str | None]] = MappingProxyType(
    {
        "age": _check_age,
        "priority": _check_priority,
        "retries": _check_retries,
        "itag": _check_itag,
        "auto_recrawl": _check_bool,
        "dont_filter": _check_bool,
        "headers": _check_mapping,
        "cookies": _check_mapping,
        "meta": _check_mapping,
    }
)


def every(minutes: float = 0, seconds: float = 0) -> Callable[[F], F]:
    """Run the decorated spider method every ``minutes * 60 + seconds`` seconds in
    serve mode. Its results (requests, items) are handled like a callback's."""
    if callable(minutes):
        raise TypeError("use @every(minutes=..., seconds=...), with the interval")
    if not (_number(minutes) and _number(seconds)):
        raise TypeError(f"@every takes numbers, got minutes={minutes!r}, seconds={seconds!r}")
    interval = float(minutes) * 60 + float(seconds)
    if not (interval > 0 and math.isfinite(interval)):
        raise ValueError(f"@every needs a positive interval, got {interval!r} seconds")

    def mark(func: F) -> F:
        setattr(func, EVERY_ATTR, interval)
        return func

    return mark


def config(**defaults: Any) -> Callable[[F], F]:
    """Defaults for the requests whose callback is the decorated method (see
    ``CONFIG_FIELDS`` for the names). ``auto_recrawl=True`` needs an ``age``."""
    for name, value in defaults.items():
        check = CONFIG_FIELDS.get(name)
        if check is None:
            close = difflib.get_close_matches(name, CONFIG_FIELDS, n=1)
            hint = f"; did you mean {close[0]!r}?" if close else ""
            known = ", ".join(CONFIG_FIELDS)
            raise TypeError(f"@config got an unknown field {name!r}{hint} (known: {known})")
        problem = check(value)
        if problem is not None:
            raise TypeError(f"@config field {name} must be {problem}, got {value!r}")
    if defaults.get("auto_recrawl") and defaults.get("age", -1) < 0:
        raise ValueError("@config(auto_recrawl=True) needs an age >= 0: when to crawl again")
    frozen = MappingProxyType(dict(defaults))

    def mark(func: F) -> F:
        setattr(func, CONFIG_ATTR, frozen)
        return func

    return mark


def callback_config(func: Callable[..., Any] | None) -> Mapping[str, Any]:
    """The ``@config`` defaults of a callback (a function or a bound method); empty if
    it has none."""
    if func is None:
        return _EMPTY
    return getattr(func, CONFIG_ATTR, _EMPTY)


_EMPTY: Mapping[str, Any] = MappingProxyType({})


def periodic_methods(spider: object) -> list[tuple[Callable[..., Any], float]]:
    """The spider's ``@every`` methods, bound, with their intervals in seconds, by name.

    An override in a subclass counts only if it is decorated too: the subclass said
    what the method is now.
    """
    intervals: dict[str, float] = {}
    seen: set[str] = set()
    for klass in type(spider).__mro__:
        for name, attr in vars(klass).items():
            if name in seen:
                continue
            seen.add(name)
            interval = getattr(attr, EVERY_ATTR, None)
            if interval is not None:
                intervals[name] = interval
    return [(getattr(spider, name), intervals[name]) for name in sorted(intervals)]


#: A Request's value for each scalar config field when the spider did not set it.
_REQUEST_DEFAULTS: Mapping[str, Any] = MappingProxyType(
    {
        "age": -1,
        "priority": 0,
        "retries": None,
        "itag": None,
        "auto_recrawl": False,
        "dont_filter": False,
    }
)


def has_config_callbacks(spider: object) -> bool:
    """Whether any method of the spider carries ``@config`` defaults (checked once per
    crawl, so spiders without them pay nothing per request)."""
    return any(
        getattr(attr, CONFIG_ATTR, None)
        for klass in type(spider).__mro__
        for attr in vars(klass).values()
    )


def apply_callback_config(request: Any) -> None:
    """Give ``request`` the ``@config`` defaults of its callback.

    A scalar field (age, priority, retries, itag, auto_recrawl, dont_filter) is set only
    where the request still has the Request default, so an explicit argument wins — a
    value passed explicitly that equals the default cannot be told apart and takes the
    config's. Headers, cookies and meta are merged, the request's own keys winning.
    """
    defaults = getattr(request.callback, CONFIG_ATTR, None)
    if not defaults:
        return
    for name, value in defaults.items():
        if name == "headers":
            for key, header in value.items():
                request.headers.setdefault(key, header)
        elif name == "meta":
            for key, item in value.items():
                request.meta.setdefault(key, item)
        elif name == "cookies":
            if isinstance(request.cookies, dict):
                request.cookies = {**value, **request.cookies}
            elif not request.cookies:
                request.cookies = dict(value)
        elif getattr(request, name) == _REQUEST_DEFAULTS[name]:
            setattr(request, name, value)
