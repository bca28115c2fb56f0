"""The Request a spider yields, with Scrapy's arguments and pyspider's scheduling fields.

Requests are created for every link of every page, so construction does no parsing:
the URL is only checked for a scheme, headers are built on first use, the fingerprint
(the task's identity) is computed once, when the scheduler first asks for it, and the parsed URL
(``parsed_url``) once, when the request is about to be downloaded.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping
from typing import Any, ClassVar, Literal, Self
from weakref import WeakValueDictionary

from multidict import CIMultiDict, CIMultiDictProxy
from w3lib.url import safe_url_string
from yarl import URL

from skitter._secrets import mask_page_url
from skitter.exceptions import InvalidURL
from skitter.http._headers import Headers
from skitter.http._methods import method_name
from skitter.http._url import canonicalize_url, fingerprint, get_fingerprint

__all__ = ["RenderMode", "Request", "request_class"]

#: How a request is downloaded: False over HTTP, True rendered in the browser, "auto"
#: over HTTP first and rendered only when the spider's check says the page needs it.
RenderMode = bool | Literal["auto"]
HeadersInit = Mapping[Any, Any] | Iterable[tuple[Any, Any]] | None
Callback = Callable[..., Any]

# Every Request subclass by its class name (module.qualname), so a stored or dict'ed
# request comes back as its class without importing anything by name: only classes
# this process has defined can be named. Weak: a class nobody holds any more goes.
_CLASSES: WeakValueDictionary[str, type[Request]] = WeakValueDictionary()


class Request:
    """A request to download ``url`` and hand the response to ``callback``.

    Scheduling fields: ``priority`` (higher first), ``exetime`` (epoch seconds
    before which the task is not dispatched; 0 = now), ``retries`` (attempts after the
    first; None = the RETRY_TIMES setting), ``age`` (seconds after which a finished task
    may be crawled again; -1 = never), ``auto_recrawl`` (schedule again ``age`` after
    each success), ``itag`` (a changed itag means the page changed: crawl again) and
    ``taskid`` (default: the fingerprint, hex). ``render=True`` asks for the page as a
    browser renders it (JavaScript run) rather than as the server sent it;
    ``render="auto"`` fetches it over HTTP and renders it only when the spider's check
    says it needs it (AutoRenderMiddleware).

    ``attributes`` (Scrapy's name) lists the constructor arguments that are also
    attributes: ``replace``, ``to_dict`` and the frontier's codec carry exactly these
    (plus an explicit ``taskid``). A subclass with arguments of its own appends them,
    as in Scrapy, and its requests keep them through copies and storage.
    """

    attributes: ClassVar[tuple[str, ...]] = (
        "url",
        "callback",
        "method",
        "headers",
        "body",
        "cookies",
        "meta",
        "encoding",
        "priority",
        "dont_filter",
        "errback",
        "cb_kwargs",
        "flags",
        "exetime",
        "retries",
        "age",
        "auto_recrawl",
        "itag",
        "render",
    )
    #: The names in ``attributes`` that Request itself does not have (set per subclass).
    extra_attributes: ClassVar[tuple[str, ...]] = ()

    __slots__ = (
        "__weakref__",  # Scrapy's fingerprint cache holds requests weakly
        "_body",
        "_cb_kwargs",
        "_flags",
        "_fp",
        "_headers",
        "_parsed",
        "_referer",
        "_taskid",
        "_url",
        "age",
        "auto_recrawl",
        "callback",
        "cookies",
        "dont_filter",
        "encoding",
        "errback",
        "exetime",
        "itag",
        "meta",
        "method",
        "priority",
        "render",
        "retries",
    )

    def __init__(
        self,
        url: str,
        callback: Callback | None = None,
        method: str = "GET",
        headers: HeadersInit = None,
        body: bytes | str | None = None,
        cookies: Mapping[str, str] | list[dict[str, Any]] | None = None,
        meta: dict[str, Any] | None = None,
        encoding: str = "utf-8",
        priority: int = 0,
        dont_filter: bool = False,
        errback: Callback | None = None,
        cb_kwargs: dict[str, Any] | None = None,
        *,
        flags: list[str] | None = None,
        exetime: float = 0.0,
        retries: int | None = None,
        age: float = -1,
        auto_recrawl: bool = False,
        itag: str | None = None,
        taskid: str | None = None,
        render: RenderMode = False,
    ) -> None:
        if render is not False and render is not True and render != "auto":
            raise TypeError(f"Request render must be True, False or 'auto', got {render!r}")
        if not isinstance(url, str):
            raise TypeError(f"Request url must be str, got {type(url).__name__}")
        url = url.strip()
        if ":" not in url[:12] or not url[:1].isalpha():
            raise InvalidURL(f"Missing scheme in request url: {url!r}")
        # As Scrapy: a space or a character a URL cannot hold is escaped, the path as
        # UTF-8 and the query in ``encoding`` (as browsers send a link on a page in that
        # encoding); ``meta["verbatim_url"]`` keeps the URL as given. (The other
        # characters RFC 3986 excludes are escaped on the wire, not in ``url``.)
        if (not url.isascii() or " " in url or '"' in url or "<" in url or ">" in url) and not (
            meta and meta.get("verbatim_url")
        ):
            url = safe_url_string(url, encoding)
        if priority.__class__ is not int and not isinstance(priority, int | float):
            raise TypeError(f"Request priority not an integer: {priority!r}")
        if callback is not None and not callable(callback):
            raise TypeError(f"Request callback must be a callable, got {callback!r}")
        if errback is not None and not callable(errback):
            raise TypeError(f"Request errback must be a callable, got {errback!r}")
        self._url = url
        self.callback = callback
        self.method = method.upper()
        self._headers: Headers | None = _header_dict(headers, encoding) if headers else None
        self._referer: str | None = None
        self._body = body.encode(encoding) if isinstance(body, str) else (body or b"")
        self.encoding = encoding
        self.cookies = cookies
        self.meta = meta if meta is not None else {}
        self.priority = priority
        self.dont_filter = dont_filter
        self.errback = errback
        self._cb_kwargs = cb_kwargs
        self._flags = flags
        self.exetime = exetime
        self.retries = retries
        self.age = age
        self.auto_recrawl = auto_recrawl
        self.itag = itag
        self.render = render
        self._taskid = taskid
        self._fp: bytes | None = None
        self._parsed: URL | None = None

    @property
    def url(self) -> str:
        return self._url

    @property
    def parsed_url(self) -> URL:
        """The URL as yarl reads it, parsed once: the object the scope check judges and
        the transport sends (aiohttp's own parser, so both read the same host). Raises
        InvalidURL when yarl cannot parse it."""
        parsed = self._parsed
        if parsed is None:
            try:
                parsed = self._parsed = URL(self._url)
            except Exception as exc:  # ValueError, and IndexError for some bracket misuse
                detail = str(exc) or type(exc).__name__
                raise InvalidURL(f"invalid URL {self._url!r} ({detail})", request=self) from None
        return parsed

    @property
    def cb_kwargs(self) -> dict[str, Any]:
        """Keyword arguments for the callback; made on first use, since most requests
        have none and a queued request should not carry an empty dict for nothing."""
        kwargs = self._cb_kwargs
        if kwargs is None:
            kwargs = self._cb_kwargs = {}
        return kwargs

    @cb_kwargs.setter
    def cb_kwargs(self, value: dict[str, Any]) -> None:
        self._cb_kwargs = value

    @property
    def flags(self) -> list[str]:
        """Labels for logs (Scrapy's ``flags``), such as ``["cached"]``; made on first
        use, as ``cb_kwargs`` is."""
        flags = self._flags
        if flags is None:
            flags = self._flags = []
        return flags

    @flags.setter
    def flags(self, value: list[str]) -> None:
        self._flags = value

    @property
    def body(self) -> bytes:
        return self._body

    @property
    def headers(self) -> Headers:
        """Scrapy's ``Headers``: any case of a name, values as bytes."""
        headers = self._headers
        if headers is None:
            headers = self._headers = Headers(encoding=self.encoding)
            if self._referer is not None:
                headers["Referer"] = self._referer
                self._referer = None
        return headers

    @headers.setter
    def headers(self, value: HeadersInit) -> None:
        """A ``Headers`` is kept as it is (Scrapy's); anything else is made one."""
        self._headers = (
            value if isinstance(value, Headers) else _header_dict(value or {}, self.encoding)
        )
        self._referer = None

    @property
    def _encoding(self) -> str:
        """Scrapy's private name of ``encoding``, which code written for it reads."""
        return self.encoding

    @property
    def has_headers(self) -> bool:
        """True when headers were set: lets hot paths skip building an empty dict."""
        return bool(self._headers) or self._referer is not None

    def setdefault_referer(self, referer: str) -> None:
        """``headers.setdefault("Referer", referer)``, without building the headers yet.

        Every link a page yields gets its Referer before it is queued, and a queued
        request can wait long: a header dict of its own would be the biggest part of it
        (about 350 bytes). The page's one string is kept instead, until the headers are
        first read (to send them, copy or store the request)."""
        if self._headers is None:
            if self._referer is None:
                self._referer = referer
        else:
            self._headers.setdefault("Referer", referer)

    @property
    def fingerprint(self) -> bytes:
        """SHA-1 of method, canonical URL and body; raises InvalidURL for a bad URL."""
        fp = self._fp
        if fp is None:
            try:
                if self.method == "GET" and not self._body:
                    fp = self._fp = get_fingerprint(self._url)
                    return fp
                canonical = canonicalize_url(self._url)
            except ValueError as exc:
                raise InvalidURL(f"cannot parse URL {self._url!r}: {exc}", request=self) from None
            fp = self._fp = fingerprint(self.method, canonical, self._body)
        return fp

    @property
    def taskid(self) -> str:
        """The scheduler's key for this request: explicit, or the fingerprint in hex."""
        taskid = self._taskid
        return taskid if taskid is not None else self.fingerprint.hex()

    @taskid.setter
    def taskid(self, value: str) -> None:
        self._taskid = value

    @property
    def has_explicit_taskid(self) -> bool:
        """True when a taskid was given rather than derived from the fingerprint."""
        return self._taskid is not None

    def __init_subclass__(cls, **kwargs: Any) -> None:
        super().__init_subclass__(**kwargs)
        cls.extra_attributes = tuple(a for a in cls.attributes if a not in Request.attributes)
        _CLASSES[class_name(cls)] = cls

    def _arguments(self) -> dict[str, Any]:
        """The constructor arguments that rebuild this request: containers copied, so
        that a copy's meta or headers can change without touching the original's."""
        kwargs: dict[str, Any] = {
            "url": self._url,
            "callback": self.callback,
            "method": self.method,
            "headers": self.headers.copy() if self.has_headers else None,
            "body": self._body,
            "cookies": self.cookies,
            "meta": dict(self.meta),
            "encoding": self.encoding,
            "priority": self.priority,
            "dont_filter": self.dont_filter,
            "errback": self.errback,
            "cb_kwargs": dict(self._cb_kwargs) if self._cb_kwargs else {},
            "flags": list(self._flags) if self._flags else [],
            "exetime": self.exetime,
            "retries": self.retries,
            "age": self.age,
            "auto_recrawl": self.auto_recrawl,
            "itag": self.itag,
            "render": self.render,
        }
        for name in self.extra_attributes:
            kwargs[name] = getattr(self, name)
        return kwargs

    def replace(self, *, cls: type[Self] | None = None, **changes: Any) -> Self:
        """A copy with some arguments changed (Scrapy's ``Request.replace``): of the
        same class, unless ``cls`` names another."""
        kwargs = self._arguments()
        kwargs.update(changes)
        # An explicit taskid survives a copy only when the URL, method and body do, and
        # never one the scheduler gave a dont_filter request (``<fingerprint>-<tag>``):
        # the copy gets its own when queued, or it would merge into the running task.
        taskid = self._taskid
        if (
            taskid is not None
            and "taskid" not in changes
            and not ({"url", "method", "body"} & changes.keys())
            and not (self.dont_filter and taskid.startswith(self.fingerprint.hex() + "-"))
        ):
            kwargs["taskid"] = taskid
        return (type(self) if cls is None else cls)(**kwargs)

    def copy(self) -> Self:
        return self.replace()

    def to_curl(self) -> str:
        """This request as a ``curl`` command line (``skitter.utils.request.request_to_curl``)."""
        from skitter.http._curl import request_to_curl

        return request_to_curl(self)

    @classmethod
    def from_curl(
        cls, curl_command: str, ignore_unknown_options: bool = True, **kwargs: Any
    ) -> Self:
        """A request from a ``curl ...`` command line (Scrapy's ``Request.from_curl``):
        ``kwargs`` override what the command says. Unknown curl options are warned
        about, or refused with ``ignore_unknown_options=False``."""
        from skitter.http._curl import curl_to_request_kwargs  # imports w3lib and argparse

        request_kwargs = curl_to_request_kwargs(curl_command, ignore_unknown_options)
        request_kwargs.update(kwargs)
        return cls(**request_kwargs)

    def to_dict(self, *, spider: object | None = None) -> dict[str, Any]:
        """This request as a dict of plain values (Scrapy's ``Request.to_dict``), which
        ``skitter.utils.request.request_from_dict`` turns back into an equal request.

        Callbacks become the names of ``spider``'s methods (ValueError for one that is
        not a method of ``spider``); a subclass is named under ``_class``."""
        d = self._arguments()
        for role in ("callback", "errback"):
            func = d[role]
            if func is not None:
                name = method_name(func, spider)
                if name is None:
                    raise ValueError(  # Scrapy's words first, then why
                        f"Function {func!r} is not an instance method in: {spider!r} "
                        f"({role} of {self!r}: it is not a method of the spider, and only "
                        "spider methods can be named)"
                    )
                d[role] = name
        d["headers"] = dict(self.headers) if self.has_headers else {}
        if self._taskid is not None:
            d["taskid"] = self._taskid
        if type(self) is not Request:
            d["_class"] = class_name(type(self))
        return d

    def __repr__(self) -> str:
        # Every log line names requests so: credentials in the URL are shown masked.
        url = self._url
        return f"<{self.method} {mask_page_url(url) if '@' in url else url}>"


def _header_dict(headers: Mapping[Any, Any] | Iterable[tuple[Any, Any]], encoding: str) -> Headers:
    """A request's headers: a copy of what was given (Scrapy's ``Headers``, a mapping,
    pairs; a multidict of str, as skitter's own code holds them, keeps repeated names)."""
    if isinstance(headers, Headers):
        return headers.copy()
    if isinstance(headers, CIMultiDict | CIMultiDictProxy):
        return Headers.from_text(headers.items())
    return Headers(headers, encoding=encoding)


def class_name(cls: type[Request]) -> str:
    """The name a stored or dict'ed request gives its class."""
    return f"{cls.__module__}.{cls.__qualname__}"


def request_class(name: str) -> type[Request]:
    """The Request class called ``name`` (``class_name``), if this process defines it;
    else ValueError, saying to import the module that defines it."""
    if name == class_name(Request):
        return Request
    cls = _CLASSES.get(name)
    if cls is None:
        raise ValueError(
            f"no Request class {name!r} is defined in this process "
            "(import the module that defines it before reading requests of that class)"
        )
    return cls
