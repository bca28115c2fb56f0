"""Scrapy's ``scrapy.http.request``: Request, ``NO_CALLBACK`` for requests whose
response no spider callback is to see, and the types of ``Request(cookies=...)``."""

from __future__ import annotations

from typing import Any, NoReturn, NotRequired, TypeAlias, TypedDict

from skitter.http._request import Request

__all__ = ["NO_CALLBACK", "CookiesT", "Request", "VerboseCookie"]


class VerboseCookie(TypedDict):
    """One cookie of ``Request(cookies=[...])`` with its domain and path."""

    name: str | bytes
    value: str | bytes | bool | float | int
    domain: NotRequired[str | bytes]
    path: NotRequired[str | bytes]
    secure: NotRequired[bool]


#: What ``Request(cookies=...)`` takes: names to values, or a list of verbose cookies.
CookiesT: TypeAlias = dict[str | bytes, str | bytes | bool | float | int] | list[VerboseCookie]


def NO_CALLBACK(*args: Any, **kwargs: Any) -> NoReturn:
    """The callback of a request made by a component for itself (robots.txt, media):
    reaching a spider callback with it is a bug, so calling it raises."""
    raise RuntimeError(
        "NO_CALLBACK was called: a request marked as not for spider callbacks reached one"
    )
