"""The Response handed to callbacks: body, decoded text, selectors, link following.

Everything derived from the body (text, the parsel selector, the base URL) is computed
on first use and cached, so a callback that only reads ``json()`` never parses HTML.
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterable, Iterator, Mapping
from typing import Any, ClassVar, Self
from urllib.parse import urljoin

import orjson
from multidict import CIMultiDict, CIMultiDictProxy
from parsel import Selector, SelectorList
from w3lib.encoding import (
    html_body_declared_encoding,
    http_content_type_encoding,
    read_bom,
    to_unicode,
)

from skitter._secrets import mask_page_url
from skitter.http._encoding import ASCII_ALIKE, auto_detect, parses_as_its_text, text_encoding
from skitter.http._headers import Headers
from skitter.http._link import Link
from skitter.http._link_request import link_request
from skitter.http._request import Callback, Request
from skitter.http._url import LinkResolver

__all__ = ["Response", "ResponseHeaders"]

#: What a Response's headers are made from: a transport's str multidict (kept as it is
#: until read), Scrapy's ``Headers``, or any mapping or pairs ``Headers`` accepts.
ResponseHeaders = (
    CIMultiDict[str] | CIMultiDictProxy[str] | Headers | Mapping[Any, Any] | Iterable[Any] | None
)

_BASE_HREF = re.compile(
    rb"<base\s[^>]*href\s*=\s*(?:\"\s*([^\"]+)\"|'\s*([^']+)'|([^\"'\s>]+))", re.IGNORECASE
)
_FOLLOWABLE = ("http://", "https://")
_UTF8_NAMES = frozenset({"utf-8", "utf8", "ascii", "us-ascii"})
_NOT_LINKS = ("javascript:", "mailto:", "tel:", "data:", "#")


class Response:
    """A downloaded page. ``request`` is the request that produced it.

    Unlike Scrapy's ``Response``, every response has ``text`` and selectors; the
    subclasses (``TextResponse``, ``HtmlResponse``, ``XmlResponse``, ``JsonResponse``)
    say what the downloader found the body to be, for ``isinstance`` checks, and fix
    the selector's type. ``body`` may be a str when ``encoding`` is given.
    """

    #: The parsel selector type; None: XML for an XML Content-Type, else HTML.
    selector_type: ClassVar[str | None] = None
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
        "_encoding",
        "_headers",
        "_raw_headers",
        "_resolver",
        "_selector",
        "_text",
        "body",
        "flags",
        "ip_address",
        "protocol",
        "request",
        "status",
        "url",
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
        self.url = url
        self.status = status
        self._headers: Headers | None = None
        self._raw_headers: CIMultiDict[str] | CIMultiDictProxy[str] | None = None
        if headers:
            self.headers = headers.copy() if isinstance(headers, Headers) else headers
        self.body = body if isinstance(body, bytes) else _body_bytes(body, encoding, self)
        #: The request this response answers; None for a response made by hand without
        #: one (as in Scrapy: nothing is invented).
        self.request: Request | None = request
        self.flags = flags if flags is not None else []
        self.ip_address = ip_address
        #: What was spoken: ``"HTTP/1.1"``, ``"HTTP/2"`` (Scrapy's attribute); None
        #: for a response not from the network (``data:``, ``file:``, made by hand).
        self.protocol = protocol
        if encoding is not None and text_encoding(encoding) is None:
            raise ValueError(f"Response(encoding={encoding!r}): not a known text encoding")
        self._encoding = encoding
        self._text: str | None = None
        self._selector: Selector | None = None
        self._resolver: LinkResolver | None = None

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

    # -- text ----------------------------------------------------------------------------
    @property
    def encoding(self) -> str:
        """The body's encoding: ``encoding=`` if given, else the BOM, then the
        Content-Type charset, then a <meta> or XML declaration, then UTF-8 if the bytes
        are valid UTF-8, else Windows-1252. A declared charset that is not a text
        encoding (``base64``, ``rot13``, an unknown name) counts as not declared."""
        if self._encoding is None:
            self._decode()
        assert self._encoding is not None
        return self._encoding

    @property
    def text(self) -> str:
        if self._text is None:
            self._decode()
        assert self._text is not None
        return self._text

    def _decode(self) -> None:
        body = self.body
        if self._encoding is not None:
            given = text_encoding(self._encoding)
            assert given is not None  # checked by __init__
            self._text = to_unicode(body, given)
            return
        # w3lib's html_to_unicode, in the same order, but every declared name is checked.
        encoding, bom = read_bom(body)
        if encoding is not None and bom is not None:
            body = body[len(bom) :]
        else:
            encoding = self._declared_or_detected(body)
        self._encoding = encoding
        self._text = to_unicode(body, encoding)

    def _declared_or_detected(self, body: bytes) -> str:
        """The encoding of a body without a BOM: the Content-Type charset, a <meta> or
        XML declaration, else UTF-8 if the bytes are valid UTF-8, else Windows-1252."""
        encoding = (
            text_encoding(http_content_type_encoding(self.header("Content-Type")))
            or text_encoding(html_body_declared_encoding(body))
            or auto_detect(body)
        )
        if encoding in ("utf-16", "utf-32"):
            encoding += "-be"  # no BOM: big-endian, as the Unicode standard says
        return encoding

    def _plain_ascii_body(self) -> bytes | None:
        """The body, when parsel may parse it as bytes to the tree it would build from
        ``text`` (``parses_as_its_text``), in an encoding that reads ASCII as ASCII; else
        None. Decoding the page and encoding it again for lxml is then skipped."""
        body = self.body
        if self._text is not None or not parses_as_its_text(body):
            return None
        given = self._encoding
        encoding = text_encoding(given) if given else self._declared_or_detected(body)
        if encoding not in ASCII_ALIKE:
            return None  # an encoding that reads ASCII bytes otherwise (UTF-16, UTF-7)
        self._encoding = given or encoding  # as _decode records it
        return body

    def declared_encoding(self) -> str | None:
        """The encoding named in the body itself, if any (for diagnostics)."""
        return html_body_declared_encoding(self.body)

    # -- selectors -------------------------------------------------------------------
    @property
    def selector(self) -> Selector:
        if self._selector is None:
            kind = self.selector_type
            if kind is None:
                content_type = (self.header("Content-Type") or "").lower()
                kind = "xml" if "xml" in content_type and "html" not in content_type else "html"
            body = self._plain_ascii_body()
            if body is None:
                self._selector = Selector(text=self.text, type=kind, base_url=self.url)
            else:
                self._selector = Selector(body=body, type=kind, base_url=self.url)
        return self._selector

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
            return orjson.loads(self.body)
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
            base = self.url
            head = self.body[:4096]
            if b"<base" in head or b"<BASE" in head:
                match = _BASE_HREF.search(head)
                if match:
                    href = next(group for group in match.groups() if group is not None)
                    base = urljoin(self.url, href.strip().decode("ascii", "replace"))
            resolver = self._resolver = LinkResolver(base)
        return resolver

    def urljoin(self, url: str) -> str:
        return self._links.resolve(url)

    def follow(
        self, url: str | Selector | Link, callback: Callback | None = None, **kwargs: Any
    ) -> Request:
        """A Request for ``url`` (absolute, relative, a ``Link``, or an ``<a>``/attribute
        selector)."""
        href = _href(url)
        if href is None:
            raise ValueError(f"cannot follow {url!r}: it has no href")
        absolute = self.urljoin(href)
        if not absolute.isascii():
            kwargs = self._link_options(kwargs)
        elif not kwargs:
            return link_request(absolute, callback)  # the usual link, built cheaply
        return Request(absolute, callback, **kwargs)

    def follow_all(
        self,
        urls: Iterable[str | Selector | Link] | None = None,
        callback: Callback | None = None,
        *,
        css: str | None = None,
        xpath: str | None = None,
        **kwargs: Any,
    ) -> Iterator[Request]:
        """Requests for many links. Links that cannot be fetched over HTTP (``mailto:``,
        ``javascript:``, bare fragments, empty hrefs) are skipped, as a link extractor
        would; give exactly one of ``urls``, ``css`` or ``xpath``."""
        if sum(x is not None for x in (urls, css, xpath)) != 1:
            raise ValueError("follow_all takes exactly one of urls, css or xpath")
        if css is not None:
            urls = self.css(css)
        elif xpath is not None:
            urls = self.xpath(xpath)
        assert urls is not None
        resolve = self._links.resolve
        for item in urls:
            href = _href(item)
            if not href:
                continue
            href = href.strip()
            if not href or href.startswith(_NOT_LINKS):
                continue
            absolute = resolve(href)  # as follow() and urljoin() give it, even if absolute
            if absolute.startswith(_FOLLOWABLE):
                if absolute.isascii():
                    yield (
                        Request(absolute, callback, **kwargs)
                        if kwargs
                        else link_request(absolute, callback)
                    )
                else:  # only then may the page's encoding matter
                    yield Request(absolute, callback, **self._link_options(kwargs))

    def _link_options(self, kwargs: dict[str, Any]) -> dict[str, Any]:
        """A followed link's Request options: the page's encoding unless UTF-8 (its
        links' queries are then percent-encoded in it, as Scrapy's ``follow`` does)."""
        encoding = self.encoding
        if encoding in _UTF8_NAMES or "encoding" in kwargs:
            return kwargs
        return {**kwargs, "encoding": encoding}

    def replace(self, *, cls: type[Self] | None = None, **changes: Any) -> Self:
        """A copy with some arguments changed, of the same class unless ``cls`` says."""
        kwargs: dict[str, Any] = {
            "url": self.url,
            "status": self.status,
            "headers": self._headers_argument(),
            "body": self.body,
            "request": self.request,
            "flags": list(self.flags),
            "ip_address": self.ip_address,
            "protocol": self.protocol,
        }
        for name in type(self).attributes:
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


def _body_bytes(body: object, encoding: str | None, response: Response) -> bytes:
    cls = type(response).__name__
    if body is None:
        return b""
    if isinstance(body, str):
        if encoding is None:
            raise TypeError(f"{cls}: a str body needs encoding= to be turned into bytes")
        given = text_encoding(encoding)
        if given is None:
            raise ValueError(f"{cls}(encoding={encoding!r}): not a known text encoding")
        return body.encode(given)
    if isinstance(body, bytes | bytearray | memoryview):
        return bytes(body)
    raise TypeError(f"{cls} body must be bytes or str, got {type(body).__name__}")


def _href(item: str | Selector | Link) -> str | None:
    if item is None:
        raise ValueError("url can't be None")
    if isinstance(item, str):
        return item
    if isinstance(item, Link):
        return item.url
    if isinstance(item, Selector):
        root = item.root
        if isinstance(root, str):  # an attribute or text selection: its value is the URL
            return root
        href = item.attrib.get("href")
        if href is None:
            href = item.attrib.get("src")
        return href
    if isinstance(item, SelectorList):
        raise ValueError(f"cannot follow a SelectorList ({item!r}): use follow_all")
    raise TypeError(f"cannot follow a {type(item).__name__}")
