"""A queued request as a few dozen bytes: the memory frontier's compact form.

A crawl's frontier can hold a million links waiting their turn. As Request objects, with
their ``meta`` dict and fingerprint, they weigh about 550 bytes each before the queue's
own bookkeeping; packed, the URL, the Referer and a handful of small fields take about
a hundred. The memory frontier packs a request when it is queued and builds it again
when it is leased.

Only requests that come back *identical in meaning* are packed, so packing never shows:

- a plain ``Request`` (a subclass may carry state of its own), keyed by its fingerprint
  (an explicit taskid stays with the object), with no headers but the Referer, no
  cookies, no ``cb_kwargs``, no ``flags`` and the default encoding;
- a ``meta`` whose values are immutable scalars (str, int, float, bool, None, bytes, by
  exact type): a list or dict in ``meta`` may be shared with the spider, which may change
  it after yielding the request and expect the callback to see the change, as it would
  in Scrapy's memory queue. Such a request, like every other, is kept as it is;
- callbacks and errbacks as small numbers the caller gives (``Callbacks``): a spider's
  methods and module functions, never a closure, which could hold a response alive.

The payload is msgpack (msgspec) and trailing fields left at their defaults are not
written. It never leaves the process, so unlike the stored format (``_codec.py``) it
has no version and trusts what it reads.
"""

from __future__ import annotations

from collections.abc import Callable
from types import FunctionType, MethodType
from typing import Any

import msgspec

from skitter.http._request import Request

__all__ = ["Callbacks", "pack_request", "unpack_request"]

_SCALARS = frozenset({str, int, float, bool, type(None), bytes})
_INT_RANGE = range(-(2**63), 2**64)  # what msgpack can carry
# A payload: the Referer, the length of the URL's prefix it shares with the Referer (a
# page's links mostly start as the page does), the rest of the URL, the callback and
# errback numbers in one int, meta (a followed link's ``{"depth": n}`` as n alone); then
# these fields, up to the last that differs from its default.
_DEFAULTS: tuple[Any, ...] = ("GET", b"", 0.0, None, -1, False, None, False, False)
_DEFAULT_TYPES = tuple(map(type, _DEFAULTS))  # 0 == 0.0 and b"" == bytearray(): exactly
_FIELDS = 5 + len(_DEFAULTS)
_ERRBACK_SHIFT = 9  # callback numbers are below 512 (Callbacks' limit)
_CALLBACK_MASK = (1 << _ERRBACK_SHIFT) - 1
_encode = msgspec.msgpack.Encoder().encode
_decode = msgspec.msgpack.Decoder().decode
_new_request = Request.__new__


class Callbacks:
    """The callables of one queue's packed requests, by number (0 is None).

    Bounded: a spider that makes a new callable per request (a ``functools.partial``)
    fills the table, and its requests are then kept as objects."""

    __slots__ = ("_ids", "_limit", "funcs")

    def __init__(self, limit: int = 256) -> None:
        self.funcs: list[Callable[..., Any] | None] = [None]
        self._ids: dict[Callable[..., Any], int] = {}
        self._limit = limit

    def number(self, func: Callable[..., Any] | None) -> int:
        """The number of ``func``, or -1 when it cannot be numbered."""
        if func is None:
            return 0
        try:
            number = self._ids.get(func)
        except TypeError:  # an unhashable callable object
            return -1
        if number is not None:
            return number
        if len(self.funcs) > self._limit or not _lasting(func):
            return -1
        number = self._ids[func] = len(self.funcs)
        self.funcs.append(func)
        return number


def _lasting(func: Callable[..., Any]) -> bool:
    """A function or method without a closure: it holds nothing a request brought."""
    if func.__class__ is MethodType:
        func = func.__func__
    return func.__class__ is FunctionType and func.__closure__ is None


def _plain_meta(meta: dict[str, Any]) -> bool:
    for key, value in meta.items():
        cls = value.__class__
        if key.__class__ is not str or cls not in _SCALARS:
            return False
        if cls is int and value not in _INT_RANGE:
            return False
    return True


def _shared_prefix(url: str, referer: str) -> int:
    """The length of the longest prefix ``url`` and ``referer`` share."""
    low, high = 0, min(len(url), len(referer)) + 1  # url[:low] is shared, url[:high] not
    while high - low > 1:
        mid = (low + high) // 2
        if referer.startswith(url[:mid]):
            low = mid
        else:
            high = mid
    return low


def pack_request(request: Request, callbacks: Callbacks) -> bytes | None:
    """``request`` as a payload that ``unpack_request`` turns back into an equal request,
    or None when it must be kept as it is (see the module docstring)."""
    if (
        request.__class__ is not Request
        or request._taskid is not None
        or request._headers is not None
        or request._body.__class__ is not bytes  # a bytearray would come back as bytes
        or request.cookies is not None
        or request._cb_kwargs
        or request._flags
        or request.encoding != "utf-8"
        or request.priority.__class__ is not int
    ):
        return None
    meta = request.meta
    if meta.__class__ is not dict or (meta and not _plain_meta(meta)):
        return None
    func = request.callback
    callback = 0 if func is None else callbacks.number(func)
    func = request.errback
    errback = 0 if func is None else callbacks.number(func)
    if callback < 0 or errback < 0:
        return None
    url, referer = request._url, request._referer
    shared = 0 if referer is None else _shared_prefix(url, referer)
    depth = meta.get("depth") if len(meta) == 1 else None
    packed_meta = depth if depth.__class__ is int and depth in _INT_RANGE else meta
    callbacks_ = callback | errback << _ERRBACK_SHIFT
    fields: list[Any] = [referer, shared, url[shared:], callbacks_, packed_meta]
    tail = (
        request.method, request._body, request.exetime, request.retries, request.age,
        request.auto_recrawl, request.itag, request.dont_filter, request.render,
    )  # fmt: skip
    if tail != _DEFAULTS or tuple(map(type, tail)) != _DEFAULT_TYPES:
        for end in range(len(tail), 0, -1):  # up to the last field that is not its default
            value, default = tail[end - 1], _DEFAULTS[end - 1]
            if value != default or value.__class__ is not default.__class__:
                fields += tail[:end]
                break
    try:
        return _encode(fields)
    except (TypeError, OverflowError, ValueError, msgspec.EncodeError):
        return None  # a str msgpack cannot carry (a lone surrogate)


def unpack_request(
    payload: bytes | memoryview, callbacks: Callbacks, priority: int, fingerprint: bytes
) -> Request:
    """The request ``pack_request`` packed, with ``priority`` (the queue's, merges
    included) and its ``fingerprint``, already known, so not computed again."""
    fields = _decode(payload)
    n = len(fields)
    if n < _FIELDS:
        fields.extend(_DEFAULTS[n - _FIELDS :])
    referer, shared, rest, callback, meta = fields[:5]
    request = _new_request(Request)
    request._url = referer[:shared] + rest if shared else rest
    request._referer = referer
    funcs = callbacks.funcs
    request.callback = funcs[callback & _CALLBACK_MASK]
    request.errback = funcs[callback >> _ERRBACK_SHIFT]
    request.meta = {"depth": meta} if meta.__class__ is int else meta
    (
        request.method, request._body, request.exetime, request.retries, request.age,
        request.auto_recrawl, request.itag, request.dont_filter, request.render,
    ) = fields[5:]  # fmt: skip
    request.priority = priority
    request._fp = fingerprint
    request._headers = None
    request.encoding = "utf-8"
    request.cookies = None
    request._cb_kwargs = None
    request._flags = None
    request._taskid = None
    request._parsed = None
    return request
