"""The Response handed to callbacks: body, decoded text, selectors, link following.

Everything derived from the body (text, the parsel selector, the base URL) is computed
on first use and cached, so a callback that only reads ``json()`` never parses HTML.
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Iterator, Mapping
from operator import attrgetter
from typing import TYPE_CHECKING, Any, ClassVar, Self

import orjson
from multidict import CIMultiDict, CIMultiDictProxy
from parsel import Selector, SelectorList

from skitter._secrets import mask_page_url
from skitter.http._decoding import (
    TextDecoding,
    body_bytes,
    text_encoding,
)
from skitter.http._headers import Headers
from skitter.http._link import Link, base_url_of, href_of, link_hrefs
from skitter.http._link_request import link_request
from skitter.http._request import Callback, Request
from skitter.http._selector import PageSelector
from skitter.http._url import LinkResolver

__all__ = ["Response", "ResponseHeaders"]

#: What a Response's headers are made from: a transport's str multidict (kept as it is
#: until read), Scrapy's ``Headers``, or any mapping or pairs ``Headers`` accepts.
ResponseHeaders = (
    CIMultiDict[str] | CIMultiDictProxy[str] | Headers | Mapping[Any, Any] | Iterable[Any] | None
)

_FOLLOWABLE = ("http://", "https://")


class Response(TextDecoding):
    """A downloaded page. ``request`` is the request that produced it.

    Unlike Scrapy's ``Response``, every response has ``text`` and selectors; the
    subclasses (``TextResponse``, ``HtmlResponse``, ``XmlResponse``, ``JsonResponse``)
    say what the downloader found the body to be, for ``isinstance`` checks, and fix
    the selector's type. ``body`` may be a str when ``encoding`` is given.
    """

    #: The parsel selector type; None: XML for an XML Content-Type, else HTML.
    selector_type: ClassVar[str | None] = None
    #: The encoding tried first for a body that declares none (Scrapy's name); UTF-8,
    #: then Windows-1252, are tried after it.
    _DEFAULT_ENCODING: ClassVar[str] = "utf-8"
    #: The constructor arguments that are also attributes (Scrapy's name): ``replace``
    #: and ``copy`` carry them. A subclass with arguments of its own appends them.
    attributes: ClassVar[tuple[str, ...]] = (
        "url",
        "status",
        "headers",
        "body",
        "flags",
        "request",
        "ip_address",
        "protocol",
    )

    __slots__ = (
        "__weakref__",
        "_body",
        "_encoding",
        "_flags",
        "_headers",
        "_inferred",
        "_raw_headers",
        "_resolver",
        "_selector",
        "_text",
        "_url",
        "ip_address",
        "protocol",
        "request",
        "status",
    )

    def __init__(
        self,
        url: str,
        status: int = 200,
        headers: ResponseHeaders = None,
        body: bytes | str = b"",
        request: Request | None = None,
        *,
        encoding: str | None = None,
        flags: list[str] | None = None,
        ip_address: str | None = None,
        protocol: str | None = None,
    ) -> None:
        if url.__class__ is not str and not isinstance(url, str):
            raise TypeError(f"{type(self).__name__} url must be str, got {type(url).__name__}")
        self._url = url
        # Scrapy takes "301" too (a status read from a header or a file).
        self.status = status if status.__class__ is int else int(status)
        self._headers: Headers | None = None
        self._raw_headers: CIMultiDict[str] | CIMultiDictProxy[str] | None = None
        if headers:
            self.headers = headers.copy() if isinstance(headers, Headers) else headers
        self._body = body if isinstance(body, bytes) else body_bytes(body, encoding, self)
        #: The request this response answers; None for a response made by hand without
        #: one (as in Scrapy: nothing is invented).
        self.request: Request | None = request
        self._flags = flags  # a list made on first read: most responses have no flags
        self.ip_address = ip_address
        #: What was spoken: ``"HTTP/1.1"``, ``"HTTP/2"`` (Scrapy's attribute); None
        #: for a response not from the network (``data:``, ``file:``, made by hand).
        self.protocol = protocol
        if encoding is not None and text_encoding(encoding) is None:
            raise ValueError(f"Response(encoding={encoding!r}): not a known text encoding")
        #: The encoding given to the constructor (kept as given), else None.
        self._encoding = encoding
        #: The encoding found from the BOM, headers or body, once ``_decode`` ran.
        self._inferred: str | None = None
        self._text: str | None = None
        self._selector: Selector | None = None
        self._resolver: LinkResolver | None = None

    # -- read-only attributes -----------------------------------------------------------
    # The text, selector and link base are derived from url and body and cached: a new
    # url or body is a new response (``replace``), as in Scrapy.
    def _refuse_url(self, value: str) -> None:
        raise AttributeError(f"{type(self).__name__}.url is read-only: use replace(url=...)")

    def _refuse_body(self, value: bytes) -> None:
        raise AttributeError(f"{type(self).__name__}.body is read-only: use replace(body=...)")

    # Read through a C getter (attrgetter), not a Python function: the engine, the
    # middlewares and callbacks read them many times a page.
    if TYPE_CHECKING:

        @property
        def url(self) -> str: ...

        @property
        def body(self) -> bytes: ...

    else:
        url = property(attrgetter("_url"), _refuse_url, doc="The page's URL.")
        body = property(attrgetter("_body"), _refuse_body, doc="The page's bytes.")

    @property
    def flags(self) -> list[str]:
        """Labels for the log line (``cached``, ``redirected``...), as Scrapy's."""
        flags = self._flags
        if flags is None:
            flags = self._flags = []
        return flags

    @flags.setter
    def flags(self, value: list[str] | None) -> None:
        self._flags = value

    # -- headers ---------------------------------------------------------------------------
    @property
    def headers(self) -> Headers:
        """Scrapy's ``Headers`` (values as bytes), made on first use from the str
        headers a transport gave: most responses are never asked for theirs, and
        skitter's own readers use ``header`` and ``header_list`` instead."""
        headers = self._headers
        if headers is None:
            raw = self._raw_headers
            headers = self._headers = Headers.from_text(raw.items()) if raw else Headers()
            self._raw_headers = None
        return headers

    @headers.setter
    def headers(self, value: ResponseHeaders) -> None:
        self._headers = self._raw_headers = None
        if isinstance(value, CIMultiDict | CIMultiDictProxy):
            self._raw_headers = value  # read-only from here: a Headers is built on demand
        elif isinstance(value, Headers):
            self._headers = value  # kept as it is, as Scrapy's setter does
        elif value:
            self._headers = Headers(value)

    def header(self, name: str, default: str | None = None) -> str | None:
        """The last value of header ``name`` as str, without building ``headers``."""
        raw = self._raw_headers
        if raw is not None:
            values = raw.getall(name, None)
            return values[-1] if values else default
        headers = self._headers
        return default if headers is None else headers.text(name, default)

    def header_list(self, name: str) -> list[str]:
        """Every value of header ``name`` as str (``Set-Cookie``), as ``header`` reads."""
        raw = self._raw_headers
        if raw is not None:
            return raw.getall(name, [])
        headers = self._headers
        return [] if headers is None else headers.text_list(name)

    def header_items(self) -> list[tuple[str, str]]:
        """Every ``(name, value)`` pair as str, a repeated header once per value."""
        raw = self._raw_headers
        if raw is not None:
            return list(raw.items())
        headers = self._headers
        return [] if headers is None else headers.text_items()

    def _headers_argument(self) -> ResponseHeaders:
        """What ``replace`` passes on: the transport's headers while still unread."""
        raw = self._raw_headers
        return raw if raw is not None else self._headers

    # -- request shortcuts ------------------------------------------------------------
    @property
    def meta(self) -> dict[str, Any]:
        return self._request("meta").meta

    @property
    def cb_kwargs(self) -> dict[str, Any]:
        return self._request("cb_kwargs").cb_kwargs

    def _request(self, attribute: str) -> Request:
        request = self.request
        if request is None:
            raise AttributeError(
                f"Response.{attribute} not available, this response is not tied to any request"
            )
        return request

    # -- selectors -------------------------------------------------------------------
    def _selector_kind(self) -> str | None:
        """The parsel type the body reads as: the class's, else XML for an XML
        Content-Type, else None: parsel's guess (JSON if the text is JSON, else HTML),
        as Scrapy leaves it for a plain text response."""
        kind = self.selector_type
        if kind is None:
            content_type = (self.header("Content-Type") or "").lower()
            if "xml" in content_type and "html" not in content_type:
                kind = "xml"
        return kind

    @property
    def selector(self) -> Selector:
        """The page's parsel selector (Scrapy's ``Selector``), made on first use."""
        selector = self._selector
        if selector is None:
            kind = self._selector_kind()
            body = self._plain_ascii_body() if kind is not None else None
            if body is None:
                selector = PageSelector.of(self, kind, text=self.text)
            else:
                selector = PageSelector.of(self, kind, body=body)
            self._selector = selector
        return selector

    def css(self, query: str) -> SelectorList[Selector]:
        return self.selector.css(query)

    def xpath(self, query: str, **kwargs: Any) -> SelectorList[Selector]:
        return self.selector.xpath(query, **kwargs)

    def jmespath(self, query: str, **kwargs: Any) -> SelectorList[Selector]:
        """A JMESPath query on the body (JSON, or JSON inside the page's text), as
        ``response.selector.jmespath`` (Scrapy's ``TextResponse.jmespath``)."""
        return self.selector.jmespath(query, **kwargs)

    def json(self) -> Any:
        """The body parsed as JSON: by orjson when it reads it; else (a body in another
        encoding, or no JSON at all) by the standard library from ``text``, as Scrapy
        does, so the error is ``json.JSONDecodeError`` (a ValueError) with its message."""
        try:
            return orjson.loads(self._body)
        except orjson.JSONDecodeError:
            return json.loads(self.text)

    # -- links ---------------------------------------------------------------------------
    @property
    def base_url(self) -> str:
        """The URL relative links resolve against: ``<base href>`` if present, else ``url``."""
        return self._links.base

    @property
    def _links(self) -> LinkResolver:
        resolver = self._resolver
        if resolver is None:
            resolver = self._resolver = LinkResolver(base_url_of(self._url, self._body))
        return resolver

    def urljoin(self, url: str) -> str:
        return self._links.resolve(url)

    def follow(
        self, url: str | Selector | Link, callback: Callback | None = None, **kwargs: Any
    ) -> Request:
        """A Request for ``url`` (absolute, relative, a ``Link``, an ``<a>``/``<link>``
        element, an element with a ``src``, or an attribute selector), in the page's
        encoding unless ``encoding`` says otherwise (a non-ASCII query is
        percent-encoded in it, as browsers and Scrapy send it)."""
        href = href_of(url)
        if href is None:
            raise ValueError(f"cannot follow {url!r}: it has no href")
        if (self._encoding or self._inferred) != "utf-8" or "encoding" in kwargs:
            self._page_encoding(kwargs)  # the links of a UTF-8 page skip it: most pages
        if kwargs:
            return Request(self.urljoin(href), callback, **kwargs)
        return link_request(self.urljoin(href), callback)  # the usual link, built cheaply

    def follow_all(
        self,
        urls: Iterable[str | Selector | Link] | None = None,
        callback: Callback | None = None,
        *,
        css: str | None = None,
        xpath: str | None = None,
        **kwargs: Any,
    ) -> Iterator[Request]:
        """Requests for many links, as ``follow`` makes them. Links that cannot be
        fetched over HTTP (``mailto:``, ``javascript:``, bare fragments, empty hrefs)
        and selections that are not links are skipped, as a link extractor would;
        give exactly one of ``urls``, ``css`` or ``xpath`` (checked at the call)."""
        if sum(x is not None for x in (urls, css, xpath)) != 1:
            raise ValueError(
                "Please supply exactly one of the following arguments: urls, css, xpath"
            )
        if css is not None:
            urls = self.css(css)
        elif xpath is not None:
            urls = self.xpath(xpath)
        assert urls is not None
        if isinstance(urls, str | bytes) or not isinstance(urls, Iterable):
            raise TypeError(f"follow_all(urls=...) takes an iterable of links, not {urls!r}")
        self._page_encoding(kwargs)
        resolve = self._links.resolve  # absolute links too, as follow() and urljoin() give them
        absolutes = (url for url in map(resolve, link_hrefs(urls)) if url.startswith(_FOLLOWABLE))
        if kwargs:
            return (Request(url, callback, **kwargs) for url in absolutes)
        return (link_request(url, callback) for url in absolutes)  # built cheaply

    def _page_encoding(self, kwargs: dict[str, Any]) -> None:
        """Give a followed link's Request options the page's encoding (UTF-8, the
        Request's default, by leaving it out); an ``encoding`` given is kept."""
        if kwargs.get("encoding") is not None:
            return
        encoding = self._encoding or self._inferred or self.encoding
        if encoding != "utf-8":
            kwargs["encoding"] = encoding
        elif "encoding" in kwargs:
            del kwargs["encoding"]  # encoding=None: the page's

    def replace(self, *, cls: type[Self] | None = None, **changes: Any) -> Self:
        """A copy with some arguments changed, of the same class unless ``cls`` says.

        The encoding goes with it when given; a text response's inferred one too when
        the body or headers change (Scrapy's rule: a new body keeps the page's
        encoding unless ``encoding`` is given), else the copy infers the same again."""
        kwargs: dict[str, Any] = {
            "url": self._url,
            "status": self.status,
            "headers": self._headers_argument(),
            "body": self._body,
            "request": self.request,
            "flags": list(self.flags),
            "ip_address": self.ip_address,
            "protocol": self.protocol,
            "encoding": self._encoding,
        }
        attributes = type(self).attributes
        if self._encoding is None and "encoding" in attributes and "encoding" not in changes:
            if "body" in changes or "headers" in changes:
                kwargs["encoding"] = self.encoding
            else:
                kwargs["encoding"] = self._inferred
        for name in attributes:
            if name not in kwargs:
                kwargs[name] = getattr(self, name)
        kwargs.update(changes)
        return (type(self) if cls is None else cls)(**kwargs)

    def copy(self) -> Self:
        """A copy of this response, of the same class (Scrapy's ``Response.copy``)."""
        return self.replace()

    def __repr__(self) -> str:
        # As a request's: log lines name responses so, credentials in the URL masked.
        url = self.url
        return f"<{self.status} {mask_page_url(url) if '@' in url else url}>"
