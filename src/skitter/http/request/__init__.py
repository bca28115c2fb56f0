"""Scrapy's ``scrapy.http.request``: Request, and ``NO_CALLBACK`` for requests whose
response no spider callback is to see."""

from __future__ import annotations

from typing import Any, NoReturn

from skitter.http._request import Request

__all__ = ["NO_CALLBACK", "Request"]


def NO_CALLBACK(*args: Any, **kwargs: Any) -> NoReturn:
    """The callback of a request made by a component for itself (robots.txt, media):
    reaching a spider callback with it is a bug, so calling it raises."""
    raise RuntimeError(
        "NO_CALLBACK was called: a request marked as not for spider callbacks reached one"
    )
