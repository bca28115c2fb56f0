"""The wire format of a stored Request: safe, versioned, fast.

Durable frontiers (SQLite, Redis) keep requests as bytes that outlive the process and,
for Redis, may be written by anyone who can reach the server. So the format carries
data only, never code: no pickle, no eval, no import by name.

- **Envelope.** A msgpack array (a msgspec ``Struct`` with ``array_like=True``: no field
  names on the wire, so encoding plus decoding costs a few microseconds). Its first
  element is the *major* format version ``v``.
- **Forward compatible within a major version** (rolling upgrades: old and new workers
  share one queue). Fields are only ever appended, each optional with a default, so a
  reader ignores trailing fields it does not know (a newer writer's) and gives the ones
  an older writer did not have their defaults. What an older reader would misread (a
  field removed, retyped or given a new meaning) takes a new major version, which a
  reader of another refuses with the reason, never misreads: its task is marked BAD,
  and ``requeue_bad`` queues it again once the worker is upgraded. A payload of the
  wrong shape is refused the same way.
- **Callbacks by name.** A callback or errback travels as the name of a method of the
  spider, and is looked up again on the spider that decodes it. Anything else (a lambda,
  a plain function, another object's method) cannot be stored, and saying so at encode
  time -- when the request is pushed -- names the culprit while it can still be fixed.
  On decode a name must be an identifier, not a dunder, and resolve to a method bound to
  that spider: a payload naming ``__init__`` or ``__class__`` gets ``UnknownCallback``,
  never a call. Single-underscore methods are allowed, as in Scrapy (``_methods``
  decides, for ``Request.to_dict`` too).
- **Subclasses by name, never by import.** A FormRequest or a spider's own Request
  subclass comes back as its class, with the attributes it adds (``extra_attributes``,
  plain data like meta), when this process defines a class of that name; a name no
  class here has is refused (the task is BAD), so a payload can only choose among the
  Request classes the spider's code already imported.
- **Plain data.** ``meta``, ``cb_kwargs`` and ``cookies`` hold only str, int, float,
  bool, None, bytes, lists and dicts with str keys, checked by exact type both ways. A
  tuple, a set or a datetime would come back as something else (msgpack has no such
  types), and a request that changes type across a restart is a bug found weeks later;
  so they are refused at encode time, naming the key.

- **No secrets.** A stored request outlives the process and, in Redis, is read by every
  worker: it must not carry what is one process's to know. So ``Cookie``,
  ``Authorization`` and ``Proxy-Authorization`` headers are never stored (the spider's
  own are held in memory: ``_heldheaders``, as is a ``user:password@`` in the URL), nor the
  credentials in ``meta["proxy"]``, nor a proxy the worker took from its environment
  (``meta["_scheme_proxy"]``: another worker has its own). They are put back at download
  time by what put them there: CookiesMiddleware rebuilds ``Cookie`` from its jar,
  HttpProxyMiddleware the proxy (credentials included) from the environment. The
  credentials of a proxy of the spider's own are stored as a mark and held in memory
  (``_proxyauth``): the Downloader puts them back, or stops the crawl when this process
  was never given them.

Every failure is a ``CodecError`` (``UnknownCallback`` for a name the spider no longer
has, which the engine turns into a BAD task) whose message names the request.
"""

from __future__ import annotations

import codecs
import math
from collections.abc import Callable, Mapping
from typing import Any, Literal

import msgspec

from skitter.exceptions import CodecError, InvalidURL, UnknownCallback
from skitter.http._headers import Headers
from skitter.http._heldheaders import HEADERS_MARK, put_back, without_credentials
from skitter.http._methods import method_name, spider_method
from skitter.http._proxyauth import ENV_PROXY_FLAG, without_proxy_secrets
from skitter.http._request import Request, class_name, request_class

__all__ = ["FORMAT_VERSION", "decode_request", "encode_request"]

FORMAT_VERSION = 1
"""The major version written and read. Appending an optional field keeps it."""
_MAX_DEPTH = 32  # nesting allowed in meta/cb_kwargs; also bounds a hostile payload's cost

_SCALARS = frozenset({str, int, float, bool, type(None), bytes})
_INT_RANGE = range(-(2**63), 2**64)  # what msgpack can carry


class _Wire(msgspec.Struct, array_like=True):
    """Major version 1. Field order is the wire format: append only, with defaults;
    trailing fields a newer writer appended are ignored."""

    v: int
    url: str
    method: str
    headers: list[tuple[str, str]] | None
    body: bytes
    cookies: dict[str, Any] | list[Any] | None
    meta: dict[str, Any]
    cb_kwargs: dict[str, Any]
    callback: str | None
    errback: str | None
    priority: int | float  # an integral float, as the memory frontier accepts
    dont_filter: bool
    exetime: int | float
    retries: int | None
    age: int | float
    auto_recrawl: bool
    itag: str | None
    taskid: str | None
    # appended: payloads written before it read as False. "auto" is refused by a reader
    # that only knows bool (its task goes BAD, to be queued again after the upgrade)
    # rather than misread as plain HTTP.
    render: bool | Literal["auto"] = False
    encoding: str | None = None  # appended, like the next two; None: UTF-8
    cls: str | None = None  # a Request subclass, by ``class_name``; None = Request
    # the subclass's ``extra_attributes``, and ``flags`` (Scrapy's log labels) when a
    # request has any: a plain request pays nothing for them
    extra: dict[str, Any] | None = None


class _Head(msgspec.Struct, array_like=True):
    """Just the version, to explain why a payload of another version does not fit."""

    v: int


def _refuse_ext(code: int, data: memoryview) -> Any:
    raise ValueError(f"msgpack extension type {code} is not allowed")


_encoder = msgspec.msgpack.Encoder()
_decoder = msgspec.msgpack.Decoder(_Wire, ext_hook=_refuse_ext)
_head_decoder = msgspec.msgpack.Decoder(_Head, ext_hook=_refuse_ext)


# -- plain data ---------------------------------------------------------------------------
def _impurity(value: Any, depth: int = 0) -> str | None:
    """Where ``value`` stops being plain data, as a path suffix plus a reason; None if
    it is plain. Exact types only: subclasses (enums, str subclasses) are refused."""
    cls = value.__class__
    if cls in _SCALARS:
        if cls is int and value not in _INT_RANGE:
            return f": int {value} does not fit in 64 bits"
        return None
    if depth >= _MAX_DEPTH:
        return f": nested deeper than {_MAX_DEPTH} levels"
    if cls is list:
        for i, item in enumerate(value):
            where = _impurity(item, depth + 1)
            if where is not None:
                return f"[{i}]{where}"
        return None
    if cls is dict:
        for key, item in value.items():
            if key.__class__ is not str:
                return f": dict key {key!r} is a {type(key).__name__}, not a str"
            where = _impurity(item, depth + 1)
            if where is not None:
                return f"[{key!r}]{where}"
        return None
    hint = " (use a list)" if cls is tuple else ""
    return f": {type(value).__name__} is not plain data{hint}"


_PLAIN = "only str, int, float, bool, None, bytes, lists and dicts with str keys can be stored"


def _check_plain(field: str, value: Any, request: Request, want: type) -> None:
    if value.__class__ is not want:
        raise CodecError(
            f"{field} of {request!r} must be a {want.__name__}, got {type(value).__name__}",
            request=request,
        )
    if value:
        where = _impurity(value)
        if where is not None:
            raise CodecError(f"{field}{where} of {request!r}: {_PLAIN}", request=request)


# -- callbacks ----------------------------------------------------------------------------
def _callback_name(request: Request, role: str, func: Callable[..., Any], spider: object) -> str:
    """The name under which ``spider`` gives back ``func``, or CodecError."""
    name = method_name(func, spider)
    if name is None:
        owner = "no spider given" if spider is None else f"spider {type(spider).__name__}"
        raise CodecError(
            f"cannot store {role} {func!r} of {request!r} ({owner}): only methods of the "
            "spider can be stored, by name; make it a spider method and pass self.<method>",
            request=request,
        )
    return name


def _resolve(name: str, role: str, spider: object, url: str) -> Callable[..., Any]:
    """The spider's method called ``name``, or UnknownCallback."""
    method = spider_method(name, spider)
    if method is None:
        cls = type(spider).__name__ if spider is not None else "None"
        raise UnknownCallback(
            f"{role} {name!r} of stored request <{url}> is not a method of spider {cls}; "
            "was it renamed or removed since the request was stored?",
            callback=name,
            spider_class=cls,
            url=url,
        )
    return method


# -- public -------------------------------------------------------------------------------
def encode_request(request: Request, spider: object | None = None) -> bytes:
    """``request`` as bytes that ``decode_request`` turns back into an equal Request.

    Raises CodecError, naming the request, for a callback that is not a method of
    ``spider``, or meta/cb_kwargs/cookies/fields that are not plain data.
    """
    callback = request.callback
    errback = request.errback
    cookies = request.cookies
    if cookies is not None:
        if isinstance(cookies, Mapping) and cookies.__class__ is not dict:
            cookies = dict(cookies)
        _check_plain("cookies", cookies, request, list if cookies.__class__ is list else dict)
    meta = request.meta
    if meta or meta.__class__ is not dict:
        _check_plain("meta", meta, request, dict)
        if "proxy" in meta or ENV_PROXY_FLAG in meta:
            meta = without_proxy_secrets(meta)
    cb_kwargs = request.cb_kwargs
    if cb_kwargs or cb_kwargs.__class__ is not dict:
        _check_plain("cb_kwargs", cb_kwargs, request, dict)
    _check_fields(request)
    cls = extra = None
    if request.__class__ is not Request:
        cls, extra = _subclass_fields(request)
    flags = _flags(request)
    if flags is not None:
        extra = {**(extra or {}), "flags": flags}
    url, headers, meta = without_credentials(request, meta)
    wire = _Wire(
        FORMAT_VERSION,
        url,
        request.method,
        headers,
        request.body,
        cookies,
        meta,
        cb_kwargs,
        None if callback is None else _callback_name(request, "callback", callback, spider),
        None if errback is None else _callback_name(request, "errback", errback, spider),
        request.priority,
        request.dont_filter,
        request.exetime,
        request.retries,
        request.age,
        request.auto_recrawl,
        request.itag,
        request.taskid if request.has_explicit_taskid else None,
        request.render,
        None if request.encoding == "utf-8" else request.encoding,
        cls,
        extra,
    )
    try:
        return _encoder.encode(wire)
    except (TypeError, OverflowError, RecursionError, msgspec.EncodeError) as exc:
        raise CodecError(f"cannot encode {request!r}: {exc}", request=request) from None


def _flags(request: Request) -> list[str] | None:
    """The request's flags, checked to be a list of str (None when there are none)."""
    flags = request._flags
    if not flags:
        return None
    _check_plain("the flags", flags, request, list)
    return flags


def _subclass_fields(request: Request) -> tuple[str, dict[str, Any] | None]:
    """The class name and extra attributes of a Request subclass's request."""
    extra = None
    names = request.extra_attributes
    if names:
        extra = {name: getattr(request, name) for name in names}
        _check_plain("the attributes", extra, request, dict)
    return class_name(type(request)), extra


def _check_fields(request: Request) -> None:
    """Scheduling fields of the wrong type would encode but not decode: refuse them now."""
    problems = []
    priority = request.priority
    if priority.__class__ is not int and not (
        priority.__class__ is float and priority.is_integer()
    ):
        problems.append(f"priority {priority!r} (want int)")
    for name, value in (("exetime", request.exetime), ("age", request.age)):
        if value.__class__ is not float and value.__class__ is not int:
            problems.append(f"{name} {value!r} (want a number)")
    if request.retries is not None and request.retries.__class__ is not int:
        problems.append(f"retries {request.retries!r} (want int or None)")
    if request.itag is not None and request.itag.__class__ is not str:
        problems.append(f"itag {request.itag!r} (want str or None)")
    for name, value in (
        ("dont_filter", request.dont_filter),
        ("auto_recrawl", request.auto_recrawl),
    ):
        if value.__class__ is not bool:
            problems.append(f"{name} {value!r} (want bool)")
    if problems:
        raise CodecError(f"cannot store {request!r}: bad " + ", ".join(problems), request=request)


def decode_request(data: bytes, spider: object | None = None) -> Request:
    """The Request that ``encode_request`` stored as ``data``, callbacks resolved on
    ``spider``. Raises CodecError for anything that is not a valid payload (truncated,
    another version, wrong types), UnknownCallback for a name ``spider`` lacks."""
    try:
        wire = _decoder.decode(data)
    except (msgspec.DecodeError, ValueError, TypeError, RecursionError) as exc:
        raise CodecError(_decode_failure(data, exc)) from None
    url = wire.url
    if wire.v != FORMAT_VERSION:
        raise CodecError(f"stored request <{url}>: {_version_problem(wire.v)}")
    for field in ("meta", "cb_kwargs"):
        value = getattr(wire, field)
        if value:
            where = _impurity(value)
            if where is not None:
                raise CodecError(f"stored request <{url}>: {field}{where}")
    if wire.cookies:
        where = _impurity(wire.cookies)
        if where is not None:
            raise CodecError(f"stored request <{url}>: cookies{where}")
    bad_number = _number_problem(wire)
    if bad_number is not None:
        raise CodecError(f"stored request <{url}>: {bad_number}")
    callback = errback = None
    if wire.callback is not None:
        callback = _resolve(wire.callback, "callback", spider, url)
    if wire.errback is not None:
        errback = _resolve(wire.errback, "errback", spider, url)
    try:
        return _rebuild(wire, callback, errback)
    except (InvalidURL, TypeError, ValueError, LookupError) as exc:
        raise CodecError(f"stored request <{url}> is not a valid request: {exc}") from None


def _rebuild(
    wire: _Wire, callback: Callable[..., Any] | None, errback: Callable[..., Any] | None
) -> Request:
    """The request through its class's constructor: Request's, or a subclass's with the
    attributes that subclass adds."""
    cls: type[Request] = Request if wire.cls is None else request_class(wire.cls)
    extra: dict[str, Any] = wire.extra or {}
    if extra:
        unknown = extra.keys() - {*cls.extra_attributes, "flags"}
        if unknown:
            raise ValueError(f"{cls.__name__} has no attributes {sorted(unknown)}")
        where = _impurity(extra)
        if where is not None:
            raise ValueError(f"the attributes{where}")
    encoding = wire.encoding or "utf-8"
    if encoding != "utf-8":
        codecs.lookup(encoding)  # LookupError for a name no codec has
    url, headers, meta = wire.url, wire.headers, wire.meta
    if meta and HEADERS_MARK in meta:
        url, headers, meta = put_back(url, headers, meta)
    return cls(
        url=url,
        callback=callback,
        method=wire.method,
        headers=Headers.from_text(headers) if headers else None,
        body=wire.body,
        cookies=wire.cookies,
        meta=meta,
        encoding=encoding,
        priority=int(wire.priority),
        dont_filter=wire.dont_filter,
        errback=errback,
        cb_kwargs=wire.cb_kwargs,
        exetime=wire.exetime,
        retries=wire.retries,
        age=wire.age,
        auto_recrawl=wire.auto_recrawl,
        itag=wire.itag,
        taskid=wire.taskid,
        render=wire.render,
        **extra,
    )


def _number_problem(wire: _Wire) -> str | None:
    """What is wrong with the scheduling numbers of a stored request: anyone who can
    write to the store can plant an infinite priority or a NaN time."""
    priority = wire.priority
    if (
        not (
            priority.__class__ is int or (math.isfinite(priority) and float(priority).is_integer())
        )
        or not -(2**63) <= priority < 2**63
    ):
        return f"priority {priority!r} is not an integer in range"
    for name in ("exetime", "age"):
        if not math.isfinite(getattr(wire, name)):
            return f"{name} {getattr(wire, name)!r} is not a finite number"
    if wire.retries is not None and wire.retries < 0:
        return f"retries {wire.retries!r} is negative"
    return None


def _decode_failure(data: bytes, exc: BaseException) -> str:
    """Why ``data`` is not a payload of this version, in words."""
    if isinstance(exc, RecursionError):
        return "malformed stored request: nested too deeply"
    try:
        head = _head_decoder.decode(data)
    except (msgspec.DecodeError, ValueError, TypeError, RecursionError):
        pass
    else:
        if head.v != FORMAT_VERSION:
            return f"stored request: {_version_problem(head.v)}"
    return f"malformed stored request ({len(data)} bytes): {exc}"


def _version_problem(version: int) -> str:
    if version > FORMAT_VERSION:
        return (
            f"format version {version}, written by a newer skitter (this one reads version "
            f"{FORMAT_VERSION}): upgrade this worker, then queue the bad tasks again"
        )
    return f"unknown format version {version} (this skitter reads version {FORMAT_VERSION})"
