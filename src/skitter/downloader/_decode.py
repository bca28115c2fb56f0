"""Incremental, size-capped decoding of ``Content-Encoding`` bodies.

The transport asks servers for compressed bodies, and DOWNLOAD_MAXSIZE must hold for
the *decoded* size: a 10 kB gzip bomb that inflates to 10 GB has to fail after
``limit`` bytes, not after the machine runs out of memory. So the body is decoded as
it arrives, and every decompressor call is told how much output it may produce
(``zlib``'s ``max_length``, brotli's ``output_buffer_limit``). A decoder never returns
more than ``budget + 1`` bytes, the ``+ 1`` being how the caller learns the limit was
crossed. Memory stays at about the limit plus one network chunk.

Supported codings: ``gzip``/``x-gzip`` (several members too), ``deflate`` (zlib-wrapped
as the RFC says, or raw as some servers send it) and ``br``. ``identity`` is a no-op.
A stack such as ``gzip, br`` is undone right to left; every stage gets the same budget.
A body whose coding is unknown is left as it is (``decoder_for`` returns ``None``).

A stream that ends before the compressed data says it is complete is accepted with the
bytes decoded so far, as browsers do: servers that cut the last few bytes are common,
and the HTTP layer already reports a connection that was lost early.
"""

from __future__ import annotations

import zlib
from typing import Protocol

import brotli

__all__ = ["BodyDecoder", "DecodeError", "decoder_for"]

_UNLIMITED = 0
_STEP = 256 * 1024


class DecodeError(ValueError):
    """The body is not valid data in its declared ``Content-Encoding``."""


class _Stage(Protocol):
    def feed(self, data: bytes, budget: int) -> bytes:
        """Decode ``data``; return at most ``budget + 1`` bytes (all of it if budget is 0)."""
        ...


class _ZlibStage:
    """gzip and deflate through one ``zlib`` decompressor, restarted per gzip member."""

    __slots__ = ("_coding", "_head", "_obj", "_wbits")

    def __init__(self, coding: str, wbits: int | None) -> None:
        self._coding = coding
        self._head = b""
        self._wbits = wbits  # None: deflate whose wrapping is not known yet
        self._obj = zlib.decompressobj(wbits) if wbits is not None else None

    def feed(self, data: bytes, budget: int) -> bytes:
        if self._obj is None:
            data = self._head + data
            if len(data) < 2:
                self._head = data  # too short to tell the wrapping yet
                return b""
            # RFC 9110 says deflate is zlib-wrapped, but servers also send raw deflate.
            # A zlib header is 0x?8 followed by a byte making the pair a multiple of 31.
            wrapped = data[0] & 0x0F == 8 and (data[0] << 8 | data[1]) % 31 == 0
            self._wbits = zlib.MAX_WBITS if wrapped else -zlib.MAX_WBITS
            self._obj = zlib.decompressobj(self._wbits)
        out = bytearray()
        obj = self._obj
        try:
            while data:
                if budget:
                    chunk = obj.decompress(data, budget + 1 - len(out))
                else:
                    chunk = obj.decompress(data)
                out += chunk
                if budget and len(out) > budget:
                    break
                data = obj.unconsumed_tail
                if obj.eof:
                    data = obj.unused_data
                    if not data or self._wbits != 31 or data[:2] != b"\x1f\x8b":
                        break  # trailing garbage after the last member is ignored
                    obj = self._obj = zlib.decompressobj(31)  # next gzip member
        except zlib.error as exc:
            raise DecodeError(f"corrupt {self._coding} data: {exc}") from None
        return bytes(out)


class _BrotliStage:
    """brotli, asked for at most ``_STEP`` bytes a call: its output limit is a soft one
    (the buffer may grow past it once), so small steps keep the overshoot small."""

    __slots__ = ("_obj",)

    def __init__(self) -> None:
        self._obj = brotli.Decompressor()

    def feed(self, data: bytes, budget: int) -> bytes:
        obj = self._obj
        try:
            if not budget:
                return obj.process(data)
            want = budget + 1
            out = bytearray(obj.process(data, output_buffer_limit=min(want, _STEP)))
            # Output held back by the limit comes out of calls with empty input.
            while len(out) < want and not obj.can_accept_more_data():
                more = obj.process(b"", output_buffer_limit=min(want - len(out), _STEP))
                if not more:
                    break
                out += more
        except brotli.error as exc:
            raise DecodeError(f"corrupt br data: {exc}") from None
        return bytes(out[:want])


class _IdentityStage:
    __slots__ = ()

    def feed(self, data: bytes, budget: int) -> bytes:
        return data


def _stage(coding: str) -> _Stage | None:
    if coding in ("gzip", "x-gzip"):
        return _ZlibStage(coding, 31)
    if coding == "deflate":
        return _ZlibStage(coding, None)
    if coding == "br":
        return _BrotliStage()
    if coding == "identity":
        return _IdentityStage()
    return None


class BodyDecoder:
    """Decodes one response body, chunk by chunk, never producing much over ``limit``.

    ``feed`` returns the decoded bytes of one chunk; once the total passes ``limit``
    (``0`` = no limit) ``exceeded`` becomes true and the caller must stop reading.
    """

    __slots__ = ("_limit", "_produced", "_stages", "codings", "exceeded")

    def __init__(self, stages: list[_Stage], codings: list[str], limit: int) -> None:
        self._stages = stages
        self._limit = limit
        self._produced = 0
        self.codings = codings
        self.exceeded = False

    def feed(self, data: bytes) -> bytes:
        limit = self._limit
        budget = limit - self._produced if limit else _UNLIMITED
        for stage in self._stages:
            data = stage.feed(data, budget)
        self._produced += len(data)
        if limit and self._produced > limit:
            self.exceeded = True
        return data


def decoder_for(content_encoding: str, limit: int) -> BodyDecoder | None:
    """A decoder for a ``Content-Encoding`` header value, or None when it is unknown.

    ``limit`` caps the decoded size in bytes (0 = none).
    """
    codings = [c.strip().lower() for c in content_encoding.split(",") if c.strip()]
    stages: list[_Stage] = []
    for coding in reversed(codings):  # the last coding applied is undone first
        stage = _stage(coding)
        if stage is None:
            return None
        stages.append(stage)
    if not stages:
        return None
    return BodyDecoder(stages, codings, limit)
