"""A request back from ``Request.to_dict``; the fingerprint under Scrapy's name."""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import Any

from skitter.http import Request
from skitter.http._methods import spider_method
from skitter.http._request import request_class

__all__ = ["fingerprint", "request_from_dict"]


def request_from_dict(d: Mapping[str, Any], *, spider: object | None = None) -> Request:
    """The request ``Request.to_dict`` turned into ``d``: of the class named under
    ``_class`` (one this process defines), with callback and errback names looked up
    as methods of ``spider`` (ValueError for a name that is not one)."""
    cls = request_class(d["_class"]) if "_class" in d else Request
    kwargs = {name: value for name, value in d.items() if name in cls.attributes}
    for role in ("callback", "errback"):
        name = kwargs.get(role)
        if isinstance(name, str):
            method = spider_method(name, spider)
            if method is None:
                owner = "no spider given" if spider is None else f"spider {spider!r}"
                raise ValueError(f"{role} {name!r} is not a method of the spider ({owner})")
            kwargs[role] = method
    if d.get("taskid") is not None:
        kwargs["taskid"] = d["taskid"]
    return cls(**kwargs)


def fingerprint(
    request: Request,
    *,
    include_headers: Iterable[str | bytes] | None = None,
    keep_fragments: bool = False,
) -> bytes:
    """The request's fingerprint, the identity duplicates are filtered by (SHA-1 of the
    method, the canonical URL and the body, the task's id; not Scrapy's bytes).

    Headers and fragments are never part of it: asking for them is refused rather than
    ignored. A request whose identity is something else says so with ``taskid=``."""
    if include_headers or keep_fragments:
        raise ValueError(
            "skitter's fingerprint is the method, the canonical URL (without its fragment) "
            "and the body; include_headers= and keep_fragments= are not supported: give "
            "the request a taskid= built from what identifies it instead"
        )
    return request.fingerprint
