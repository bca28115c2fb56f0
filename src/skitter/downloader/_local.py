"""``data:`` and ``file:`` requests, answered without the network (Scrapy's
DataURIDownloadHandler and FileDownloadHandler).

The Downloader sends them here instead of to a transport, after the scope check: both
schemes are refused unless the spider lists them in ``allowed_schemes`` (or the request
has ``meta["allow_offsite"]``), since a ``file:`` URL reads the crawling machine's disk
(``http.Scope``). Redirects never lead here (RedirectMiddleware follows http and https
only), nor links (``Response.follow`` makes http and https requests only).

- ``data:`` (RFC 2397, parsed by w3lib): the body is the decoded data, status 200, no
  headers (as Scrapy); the Response class is the media type's (``HtmlResponse`` for
  ``text/html``...), and a ``text/*`` media type's charset (US-ASCII by default) is the
  response's encoding. A URL that is not a valid data URI is an InvalidURL.
- ``file:``: the file's bytes, read in a thread, status 200, no headers; the Response
  class is guessed from the file name, then the bytes (as Scrapy). A missing or
  unreadable file is a RequestError (not retried: it would fail the same way); one
  larger than DOWNLOAD_MAXSIZE (``meta["download_maxsize"]``) a ResponseTooLarge,
  refused before reading.

Both count in the ``downloader/*`` stats like any download and set
``meta["download_latency"]``.
"""

from __future__ import annotations

import asyncio
import os
import time
from pathlib import Path
from typing import TYPE_CHECKING

from w3lib.url import file_uri_to_path, parse_data_uri

from skitter.downloader._transport import TransportStats
from skitter.exceptions import InvalidURL, RequestError, ResponseTooLarge
from skitter.http import Request, Response, TextResponse, response_class
from skitter.settings import DownloaderSettings

if TYPE_CHECKING:
    from skitter._types import StatsSink
    from skitter.settings import Settings

__all__ = ["LOCAL_PREFIXES", "LocalHandler"]

#: What a request URL starts with (lower-cased) to be answered here.
LOCAL_PREFIXES = frozenset({"data:", "file:"})


class LocalHandler:
    """Answers ``data:`` and ``file:`` requests; one per crawl."""

    __slots__ = ("_maxsize", "_stats")

    def __init__(self, settings: Settings, stats: StatsSink) -> None:
        self._stats = TransportStats(stats)
        self._maxsize: int = settings.view(DownloaderSettings).download_maxsize

    async def fetch(self, request: Request) -> Response:
        stats = self._stats
        stats.request(request)
        started = time.monotonic()
        try:
            if request.url[:5].lower() == "data:":
                response = _data(request)
            else:
                response = await self._file(request)
        except RequestError as exc:
            stats.exception(exc)
            raise
        request.meta["download_latency"] = time.monotonic() - started
        stats.response(response)
        return response

    async def _file(self, request: Request) -> Response:
        try:
            path = Path(file_uri_to_path(request.url))
        except ValueError as exc:
            raise InvalidURL(f"cannot read {request!r}: {exc}", request=request) from None
        meta = request.meta
        maxsize: int = meta.get("download_maxsize", self._maxsize) if meta else self._maxsize
        try:
            body = await asyncio.to_thread(_read, path, maxsize)
        except _TooLarge as exc:
            raise ResponseTooLarge(
                f"{request!r}: file of {exc.size} bytes is larger than DOWNLOAD_MAXSIZE "
                f"({maxsize} bytes); not read",
                request=request,
            ) from None
        except OSError as exc:
            reason = exc.strerror or type(exc).__name__
            raise RequestError(f"cannot read {request!r}: {reason}", request=request) from None
        return response_class(None, str(path), body)(request.url, 200, None, body, request)


class _TooLarge(Exception):
    def __init__(self, size: int) -> None:
        self.size = size


def _read(path: Path, maxsize: int) -> bytes:
    with path.open("rb") as file:
        size = os.fstat(file.fileno()).st_size
        if maxsize and size > maxsize:
            raise _TooLarge(size)
        # A file that grows while it is read is cut at the limit plus one byte, and
        # refused below, rather than read whole.
        body = file.read(maxsize + 1) if maxsize else file.read()
    if maxsize and len(body) > maxsize:
        raise _TooLarge(len(body))
    return body


def _data(request: Request) -> Response:
    try:
        uri = parse_data_uri(request.url)
    except ValueError as exc:
        message = f"cannot read {request!r}: not a data URI ({exc})"
        raise InvalidURL(message, request=request) from None
    cls = response_class({"Content-Type": uri.media_type})
    encoding = None
    if issubclass(cls, TextResponse) and uri.media_type.partition("/")[0] == "text":
        encoding = uri.media_type_parameters.get("charset")
    try:
        return cls(request.url, 200, None, uri.data, request, encoding=encoding)
    except ValueError:  # a charset no one knows: let the body speak for itself
        return cls(request.url, 200, None, uri.data, request)
