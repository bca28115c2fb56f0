"""An in-memory transport: a test's handler answers every request, without a server.

``MockTransport(handler)`` is given as DOWNLOAD_TRANSPORT (it is a transport factory:
the crawl builds its own transport from it, with the crawl's settings, stats and
signals), and ``handler(request)`` answers each request the crawl downloads. The
answer goes through the same code as an answer from the network (``StreamingTransport``
and ``_exchange``): the DOWNLOAD_MAXSIZE / DOWNLOAD_WARNSIZE / DOWNLOAD_MAX_HEADERS_SIZE
checks, the headers_received and bytes_received signals, Content-Encoding decoded by
skitter's bounded decoder, data loss, the Response class chosen by Content-Type, the
``downloader/*`` stats. Everything above the transport (middlewares, scheduler, engine,
spider, pipelines, feeds) is the real thing; only the socket is missing. So a test
through it tests what a crawl does, and runs in microseconds per request, the same
way every time.

What ``handler`` may return (or a coroutine of it):

- a ``MockResponse``: status, headers and body, exactly;
- a ``str``: an HTML page (200, ``text/html; charset=utf-8``);
- ``bytes``: a body with no Content-Type (200);
- an ``int``: that status with an empty body.

A network failure is simulated by raising skitter's error for it
(``ConnectError(..., request=request)``, ``ConnectionLost``...); an async handler that
waits longer than DOWNLOAD_TIMEOUT is a DownloadTimeout. Any other exception is a bug
in the handler and goes on as it is.
"""

from __future__ import annotations

import inspect
import json
from collections.abc import AsyncIterator, Awaitable, Callable, Iterable, Mapping
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, NoReturn, TypeAlias

from multidict import CIMultiDict

from skitter.downloader.wiring import NO_BODY_STATUSES, Head, StreamingTransport, TruncatedBody
from skitter.http import Request
from skitter.settings import Settings
from skitter.signals import SignalManager
from skitter.testing._context import DictStats

if TYPE_CHECKING:
    from skitter._types import StatsSink
    from skitter.downloader.wiring import CrawlResolver

__all__ = ["Answer", "Handler", "MockResponse", "MockTransport"]

HeadersLike: TypeAlias = Mapping[str, str] | Iterable[tuple[str, str]]


@dataclass(frozen=True, slots=True, init=False)
class MockResponse:
    """What the server sends: ``status``, ``headers`` (a mapping, or pairs for repeated
    names such as Set-Cookie) and ``body``, sent as they are (a compressed body with its
    Content-Encoding is decoded by the crawl, as from the network).

    Content-Length is added as the body's length unless the headers give one; a
    Content-Length larger than the body is a body that ended early (data loss), as when
    a server closes the connection half-way. Immutable: one may answer many requests.
    """

    status: int
    headers: tuple[tuple[str, str], ...]
    body: bytes

    def __init__(
        self, status: int = 200, headers: HeadersLike | None = None, body: bytes = b""
    ) -> None:
        pairs = headers.items() if isinstance(headers, Mapping) else (headers or ())
        object.__setattr__(self, "status", status)
        object.__setattr__(self, "headers", tuple((str(k), str(v)) for k, v in pairs))
        object.__setattr__(self, "body", bytes(body))

    @classmethod
    def html(cls, text: str, status: int = 200, headers: HeadersLike | None = None) -> MockResponse:
        """An HTML page, UTF-8 encoded."""
        return cls._typed(text.encode(), "text/html; charset=utf-8", status, headers)

    @classmethod
    def text(cls, text: str, status: int = 200, headers: HeadersLike | None = None) -> MockResponse:
        """A plain text body, UTF-8 encoded."""
        return cls._typed(text.encode(), "text/plain; charset=utf-8", status, headers)

    @classmethod
    def json(cls, data: Any, status: int = 200, headers: HeadersLike | None = None) -> MockResponse:
        """``data`` as a JSON document."""
        return cls._typed(json.dumps(data).encode(), "application/json", status, headers)

    @classmethod
    def redirect(cls, location: str, status: int = 302) -> MockResponse:
        """A redirect to ``location`` (relative or absolute), with no body."""
        return cls(status, {"Location": location})

    @classmethod
    def _typed(
        cls, body: bytes, content_type: str, status: int, headers: HeadersLike | None
    ) -> MockResponse:
        given = CIMultiDict(headers.items() if isinstance(headers, Mapping) else (headers or ()))
        given.setdefault("Content-Type", content_type)
        return cls(status, list(given.items()), body)


#: What a handler answers (see the module's docstring).
Answer: TypeAlias = MockResponse | str | bytes | int
#: ``handler(request)``: the answer to one request, or a coroutine of it.
Handler: TypeAlias = Callable[[Request], "Answer | Awaitable[Answer]"]


class MockTransport(StreamingTransport):
    """A Transport whose network is ``handler`` (see the module's docstring).

    As DOWNLOAD_TRANSPORT it is a factory: the crawl calls it, as it builds the built-in
    transports, for a transport of its own that shares ``handler`` and ``requests``.
    On its own, ``async with MockTransport(handler) as transport`` fetches with the
    default settings (or ``settings=``). ``requests`` lists every request it was asked
    for, in order, whichever of the two fetched it.
    """

    name = "mock"

    def __init__(
        self,
        handler: Handler,
        settings: Settings | None = None,
        stats: StatsSink | None = None,
        *,
        signals: SignalManager | None = None,
        spider: Any = None,
        resolver: CrawlResolver | None = None,
        requests: list[Request] | None = None,
    ) -> None:
        self.handler = handler
        #: Every request asked for, in order (shared with the crawl's transports).
        self.requests: list[Request] = [] if requests is None else requests
        super().__init__(
            settings if settings is not None else Settings(),
            stats if stats is not None else DictStats(),
            signals=signals,
            spider=spider,
            resolver=resolver,
        )

    def __call__(
        self,
        settings: Settings,
        stats: StatsSink,
        *,
        signals: SignalManager | None = None,
        spider: Any = None,
        resolver: CrawlResolver | None = None,
    ) -> MockTransport:
        """The crawl's transport: this handler, the crawl's settings, stats and signals."""
        return MockTransport(
            self.handler,
            settings,
            stats,
            signals=signals,
            spider=spider,
            resolver=resolver,
            requests=self.requests,
        )

    def _send(self, request: Request, proxy: str | None) -> _Exchange:
        self.requests.append(request)
        return _Exchange(self.handler, request)

    def _translate(self, exc: BaseException, request: Request, detail: str) -> NoReturn:
        raise exc  # the handler's own bug, not a network error: it goes on as it is


class _Exchange:
    """One answer as a ``Head``; a plain class, not a generator: the benchmarks' path."""

    __slots__ = ("_handler", "_request")

    def __init__(self, handler: Handler, request: Request) -> None:
        self._handler = handler
        self._request = request

    async def __aenter__(self) -> Head:
        answer = self._handler(self._request)
        if inspect.isawaitable(answer):
            answer = await answer
        return _head(_response(answer, self._request))

    async def __aexit__(self, *exc_info: object) -> None:
        return None


def _response(answer: object, request: Request) -> MockResponse:
    if isinstance(answer, MockResponse):
        return answer
    if isinstance(answer, str):
        return MockResponse.html(answer)
    if isinstance(answer, bytes):
        return MockResponse(body=answer)
    if isinstance(answer, int) and not isinstance(answer, bool):
        return MockResponse(answer)
    raise TypeError(
        f"the MockTransport handler answered {request!r} with {answer!r}: expected a "
        "MockResponse, str (HTML), bytes (a body) or int (a status)"
    )


def _head(response: MockResponse) -> Head:
    headers = CIMultiDict(response.headers)
    body = response.body
    length = headers.get("Content-Length")
    if length is None and response.status not in NO_BODY_STATUSES:
        headers["Content-Length"] = str(len(body))
    elif length is not None and length.strip().isdigit():
        body = body[: int(length)]  # a client reads no further than Content-Length
    truncated = length is not None and length.strip().isdigit() and int(length) > len(body)
    return Head(
        status=response.status,
        headers=headers,
        headers_size=sum(len(name) + len(value) for name, value in headers.items()),
        protocol="HTTP/1.1",
        ip_address=None,
        raw=_raw(body, truncated),
        cut=_nothing,
    )


async def _raw(body: bytes, truncated: bool) -> AsyncIterator[bytes]:
    if body:
        yield body
    if truncated:
        raise TruncatedBody("the connection closed before Content-Length bytes came")


def _nothing() -> None:
    return None
