"""Reading a response body under the download limits, for every HTTP transport.

The body is read chunk by chunk and decoded as it arrives (``_decode``), so that
DOWNLOAD_MAXSIZE bounds the decoded size and the memory held, and DOWNLOAD_WARNSIZE
warns once per response. A body that ends early (the connection closed before its
Content-Length, a broken chunked encoding, a compressed stream cut short) is data
loss: with DOWNLOAD_FAIL_ON_DATALOSS (Scrapy's default) a ConnectionLost whose message
says how to keep it; without, the bytes that came, for the transport to flag
``"dataloss"``.

A transport hands its raw chunks (never decoded by its client library) and a ``cut``
that drops the connection; a client's own "body ended early" error is either listed in
``lost`` or turned into ``TruncatedBody`` by the transport.
"""

from __future__ import annotations

import logging
from collections.abc import AsyncGenerator, AsyncIterator, Awaitable, Callable

from skitter.downloader._decode import BodyDecoder, DecodeError, TruncatedBody, decoder_for
from skitter.exceptions import ConnectionLost, ResponseTooLarge
from skitter.http import Request

__all__ = ["DATALOSS_HINT", "RawHook", "decoder_for_body", "read_body", "warn_size"]

logger = logging.getLogger("skitter.downloader")

#: What hears each chunk as it came off the wire (the bytes_received signal).
RawHook = Callable[[bytes], Awaitable[object]]
DATALOSS_HINT = " (DOWNLOAD_FAIL_ON_DATALOSS=False would pass it on, flagged 'dataloss')"


async def read_body(
    raw: AsyncIterator[bytes],
    cut: Callable[[], object],
    request: Request,
    decoder: BodyDecoder | None,
    maxsize: int,
    warnsize: int,
    on_raw: RawHook | None = None,
    fail_on_dataloss: bool = True,
    lost_errors: tuple[type[BaseException], ...] = (),
) -> tuple[bytes, bool]:
    """Read the body chunk by chunk from ``raw``, decoding and enforcing the size limits
    as it comes; ``on_raw`` hears each chunk as it came off the wire, ``cut`` drops the
    connection of a body over the limit. Also whether the body ended early (only without
    ``fail_on_dataloss``: else that raises)."""
    parts: list[bytes] = []
    lost = False
    size = 0
    decoded = None if decoder is None else _decoded(raw, request, decoder, on_raw)
    chunks: AsyncIterator[bytes] = raw if decoded is None else decoded
    raw_hook = on_raw if decoded is None else None
    ended_early: tuple[type[BaseException], ...] = (TruncatedBody, *lost_errors)
    try:
        async for chunk in chunks:
            if raw_hook is not None:
                await raw_hook(chunk)
            size += len(chunk)
            if maxsize and size > maxsize:
                cut()  # do not drain the rest of a huge body into the pool
                what = "decoded body" if decoder is not None else "body"
                raise ResponseTooLarge(
                    f"{request!r}: {what} is larger than DOWNLOAD_MAXSIZE ({maxsize} bytes); "
                    "cut off",
                    request=request,
                )
            if warnsize and size > warnsize:
                warn_size(request, size, warnsize)
                warnsize = 0
            parts.append(chunk)
    except ended_early as exc:
        if not fail_on_dataloss:
            lost = True
        elif isinstance(exc, TruncatedBody):
            raise ConnectionLost(
                f"{request!r}: body truncated: {exc}{DATALOSS_HINT}", request=request
            ) from None
        else:
            raise
    finally:
        if decoded is not None:
            await decoded.aclose()
    return b"".join(parts), lost


async def _decoded(
    raw: AsyncIterator[bytes], request: Request, decoder: BodyDecoder, on_raw: RawHook | None
) -> AsyncGenerator[bytes, None]:
    """The decoded body, chunk by chunk, ending with what the decoder held at the end; a
    stream cut short raises TruncatedBody (data loss), for ``read_body`` to judge."""
    try:
        async for chunk in raw:
            if on_raw is not None:
                await on_raw(chunk)
            yield decoder.feed(chunk)
        yield decoder.finish()
    except TruncatedBody:
        raise
    except DecodeError as exc:
        raise _undecodable(request, ", ".join(decoder.codings), exc) from None


def decoder_for_body(request: Request, coding: str, maxsize: int | None) -> BodyDecoder | None:
    try:
        return decoder_for(coding, maxsize or None)
    except DecodeError as exc:
        raise _undecodable(request, coding, exc) from None


def _undecodable(request: Request, coding: str | None, exc: DecodeError) -> ConnectionLost:
    return ConnectionLost(
        f"{request!r}: cannot decode body (Content-Encoding {coding!r}): {exc}", request=request
    )


def warn_size(request: Request, size: int, warnsize: int) -> None:
    logger.warning(
        "%r: body of %d bytes or more is larger than DOWNLOAD_WARNSIZE (%d bytes)",
        request,
        size,
        warnsize,
    )
