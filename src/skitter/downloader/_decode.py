"""Incremental, size-capped decoding of ``Content-Encoding`` bodies, for every transport.

The transport asks servers for compressed bodies, and DOWNLOAD_MAXSIZE must hold for
the *decoded* size: a 10 kB gzip bomb that inflates to 10 GB has to fail after
``limit`` bytes, not after the machine runs out of memory. So the body is decoded as
it arrives, and while a limit is set no decompressor call runs without an output cap
(``zlib``'s ``max_length``, brotli's ``output_buffer_limit``, zstd's ``max_length``):
not the first call, not the calls that drain an unconsumed tail, not the next gzip
member or zstd frame, not the final flush. The last stage is asked for at most
``budget + 1`` bytes a call, the ``+ 1`` being how the caller learns the limit was
crossed; a spent budget is ``0`` (so a cap of one byte), and "no limit" is ``None``,
so the two can never be confused.

A stack such as ``gzip, br`` is undone right to left, as a pipeline that pulls: a
stage asks the one before it for more input only once it has turned all it holds into
output, and earlier stages are capped at ``_STEP`` bytes a call (their output is not
body bytes; it feeds the next stage one piece at a time). No stage ever expands a
whole outer output at once; memory stays at about the limit plus one piece per stage.

Supported codings (``ACCEPT_ENCODING`` lists them, for ``Accept-Encoding``):
``gzip``/``x-gzip`` (several members too), ``deflate`` (zlib-wrapped as the RFC says,
or raw as some servers send it), ``br`` and ``zstd`` (several frames too; a window
over 8 MiB is refused, as RFC 9659 allows and browsers do). ``identity`` is a no-op.
A body whose coding is unknown is left as it is (``decoder_for`` returns ``None``).

Correct or loud: a body whose compressed stream is not at its end when the body ends
(``finish``) is an error, never a good page with the bytes decoded so far, whichever
stage was cut. Bytes after the end of a complete gzip or deflate stream that do not
start a new gzip member are ignored, as browsers and zlib tools do. A body with no
bytes at all is empty, not truncated (servers label empty answers ``gzip`` too).
"""

from __future__ import annotations

import sys
import zlib
from collections.abc import Callable
from typing import Protocol

import brotli

if sys.version_info >= (3, 14):
    from compression import zstd
else:  # the same module, backported
    from backports import zstd

__all__ = ["ACCEPT_ENCODING", "BodyDecoder", "DecodeError", "TruncatedBody", "decoder_for"]

_STEP = 256 * 1024
"""Largest output of one decompressor call: bounds memory per stage, and per piece."""
_BROTLI_STEP = 128 * 1024
"""brotli's output limit is soft (its buffer grows in blocks of 32 KiB, 64 KiB, ...),
so it is asked for less than ``_STEP`` and what comes out past the cap is held back."""
_ZSTD_OPTIONS: dict[int, int] = {zstd.DecompressionParameter.window_log_max: 23}  # 8 MiB, RFC 9659
_GZIP_MAGIC = b"\x1f\x8b"
_MAX_CODINGS = 5
"""More stacked codings than this are refused: no server needs them, and each one costs
a decompressor's memory (urllib3 draws the line at the same place)."""


class DecodeError(ValueError):
    """The body is not valid data in its declared ``Content-Encoding``."""


class TruncatedBody(DecodeError):
    """The body ended before the end of its compressed stream."""


class _Stage(Protocol):
    """One coding. ``write`` is only called once ``read`` has returned ``b""``."""

    def write(self, data: bytes) -> None: ...

    def read(self, cap: int) -> bytes:
        """At most ``cap`` bytes of output; ``b""`` when all input given is used up."""
        ...

    def finished(self) -> bool:
        """Whether the input so far ends exactly at the end of a compressed stream."""
        ...


class _ZlibStage:
    """gzip and deflate through ``zlib``, one decompressor per gzip member."""

    __slots__ = ("_coding", "_full", "_input", "_members", "_obj", "_trailing", "_wbits")

    def __init__(self, coding: str, wbits: int | None) -> None:
        self._coding = coding
        self._wbits = wbits  # None: deflate whose wrapping is not known yet
        self._obj: zlib._Decompress | None = None
        self._input = b""
        self._members = 0  # complete streams so far
        self._trailing = False  # garbage after the last stream: ignore the rest
        self._full = False  # the last call filled its cap: output may be pending

    def write(self, data: bytes) -> None:
        if not self._trailing:
            self._input = self._input + data if self._input else data

    def read(self, cap: int) -> bytes:
        try:
            while True:
                obj = self._obj
                if obj is None:
                    obj = self._start()
                    if obj is None:
                        return b""
                data = obj.unconsumed_tail
                if not data:
                    data, self._input = self._input, b""
                    if not data and not self._full:
                        return b""  # nothing given and nothing held back
                out = obj.decompress(data, cap)
                self._full = len(out) == cap
                if obj.eof:
                    self._members += 1
                    self._obj = None
                    self._input = obj.unused_data + self._input
                    self._full = False
                if out:
                    return out
        except zlib.error as exc:
            raise DecodeError(f"corrupt {self._coding} data: {exc}") from None

    def _start(self) -> zlib._Decompress | None:
        """A decompressor for the stream that ``_input`` starts, or None for now."""
        data = self._input
        if self._members:  # what follows a complete stream: another gzip member?
            if self._wbits == 31 and data[:2] == _GZIP_MAGIC[: len(data[:2])]:
                if len(data) < 2:
                    return None  # b"" or b"\x1f": cannot tell yet
            else:
                self._trailing = bool(data)
                self._input = b""
                return None
        elif self._wbits is None:
            if len(data) < 2:
                return None  # too short to tell the wrapping yet
            # RFC 9110 says deflate is zlib-wrapped, but servers also send raw deflate.
            # A zlib header is 0x?8 followed by a byte making the pair a multiple of 31.
            wrapped = data[0] & 0x0F == 8 and (data[0] << 8 | data[1]) % 31 == 0
            self._wbits = zlib.MAX_WBITS if wrapped else -zlib.MAX_WBITS
        elif not data:
            return None
        self._obj = zlib.decompressobj(self._wbits)
        return self._obj

    def finished(self) -> bool:
        return self._obj is None and self._members > 0 and len(self._input) < 2


class _BrotliStage:
    """brotli: input is handed over only when the decoder can take it (its output limit
    leaves input inside it); output past the cap is held for the next read."""

    __slots__ = ("_held", "_input", "_obj")

    def __init__(self) -> None:
        self._obj = brotli.Decompressor()
        self._input = b""
        self._held = b""

    def write(self, data: bytes) -> None:
        self._input = self._input + data if self._input else data

    def read(self, cap: int) -> bytes:
        out = self._held
        if not out:
            obj = self._obj
            try:
                while True:
                    # A decoder stopped by its output limit keeps the rest of its input
                    # and must be drained with empty calls before it takes more; one
                    # that took all its input may still hold output, hence the
                    # empty calls even when it says it can take more.
                    data = b""
                    if self._input and obj.can_accept_more_data():
                        data, self._input = self._input, b""
                    out = obj.process(data, output_buffer_limit=min(cap, _BROTLI_STEP))
                    if out or not self._input:
                        break
            except brotli.error as exc:
                raise DecodeError(f"corrupt br data: {exc}") from None
        if len(out) > cap:
            out, self._held = out[:cap], out[cap:]
        else:
            self._held = b""
        return out

    def finished(self) -> bool:
        return not self._held and self._obj.is_finished()


class _ZstdStage:
    """zstd, one decompressor per frame (a body may hold several, as the RFC allows)."""

    __slots__ = ("_frames", "_input", "_obj")

    def __init__(self) -> None:
        self._obj: zstd.ZstdDecompressor | None = None
        self._input = b""
        self._frames = 0

    def write(self, data: bytes) -> None:
        self._input = self._input + data if self._input else data

    def read(self, cap: int) -> bytes:
        try:
            while True:
                obj = self._obj
                if obj is None:
                    if not self._input:
                        return b""
                    obj = self._obj = zstd.ZstdDecompressor(options=_ZSTD_OPTIONS)
                data = b""
                if obj.needs_input:
                    data, self._input = self._input, b""
                    if not data:
                        return b""
                out = obj.decompress(data, cap)
                if obj.eof:
                    self._frames += 1
                    self._obj = None
                    self._input = obj.unused_data + self._input
                if out:
                    return out
        except zstd.ZstdError as exc:
            raise DecodeError(f"corrupt zstd data: {exc}") from None

    def finished(self) -> bool:
        return self._obj is None and self._frames > 0 and not self._input


class _IdentityStage:
    __slots__ = ("_input",)

    def __init__(self) -> None:
        self._input = b""

    def write(self, data: bytes) -> None:
        self._input = self._input + data if self._input else data

    def read(self, cap: int) -> bytes:
        data = self._input
        if len(data) <= cap:
            self._input = b""
            return data
        self._input = data[cap:]
        return data[:cap]

    def finished(self) -> bool:
        return True


_CODINGS: dict[str, Callable[[], _Stage]] = {
    "gzip": lambda: _ZlibStage("gzip", 31),
    "deflate": lambda: _ZlibStage("deflate", None),
    "br": _BrotliStage,
    "zstd": _ZstdStage,
}
"""The codings undone here, in the order ``Accept-Encoding`` asks for them."""
_ALSO_UNDONE: dict[str, Callable[[], _Stage]] = {
    "x-gzip": lambda: _ZlibStage("x-gzip", 31),
    "identity": _IdentityStage,
}
"""Decoded when a server sends them, never asked for."""

ACCEPT_ENCODING = ", ".join(_CODINGS)
"""What ``decoder_for`` can decode, as an ``Accept-Encoding`` value."""


class BodyDecoder:
    """Decodes one response body, chunk by chunk, never producing much over ``limit``.

    ``feed`` returns the decoded bytes of one chunk; once the total passes ``limit``
    (``None`` = no limit) ``exceeded`` becomes true and the caller must stop reading.
    ``finish`` is called once the body has ended: it returns what the stages still
    held and raises ``TruncatedBody`` if a compressed stream was cut short.
    """

    __slots__ = ("_fed", "_limit", "_produced", "_stages", "codings", "exceeded")

    def __init__(self, stages: list[_Stage], codings: list[str], limit: int | None) -> None:
        self._stages = stages  # in the order they are undone
        self._limit = limit
        self._produced = 0
        self._fed = False
        self.codings = codings
        self.exceeded = False

    def feed(self, data: bytes) -> bytes:
        if not data or self.exceeded:
            return b""
        self._fed = True
        self._stages[0].write(data)
        return self._drain()

    def finish(self) -> bytes:
        out = self._drain()
        if self._fed and not self.exceeded:
            for coding, stage in zip(reversed(self.codings), self._stages, strict=True):
                if not stage.finished():
                    raise TruncatedBody(
                        f"{coding} data ended before the end of its compressed stream"
                    )
        return out

    def _drain(self) -> bytes:
        """All the output the stages can give from their input, within the limit."""
        limit = self._limit
        last = len(self._stages) - 1
        parts: list[bytes] = []
        while not self.exceeded:
            cap = _STEP if limit is None else min(_STEP, limit - self._produced + 1)
            piece = self._pull(last, cap)
            if not piece:
                break
            parts.append(piece)
            self._produced += len(piece)
            if limit is not None and self._produced > limit:
                self.exceeded = True
        return parts[0] if len(parts) == 1 else b"".join(parts)

    def _pull(self, index: int, cap: int) -> bytes:
        """At most ``cap`` bytes out of stage ``index``, refilled from the stage before."""
        stage = self._stages[index]
        while True:
            piece = stage.read(cap)
            if piece or not index:
                return piece
            more = self._pull(index - 1, _STEP)
            if not more:
                return b""
            stage.write(more)


def decoder_for(content_encoding: str, limit: int | None) -> BodyDecoder | None:
    """A decoder for a ``Content-Encoding`` header value, or None when it is unknown.

    ``limit`` caps the decoded size in bytes; ``None`` means no limit (and ``0`` means
    an empty body, as a spent budget does). Raises ``DecodeError`` for a stack of more
    than ``_MAX_CODINGS`` codings.
    """
    if limit is not None and limit < 0:
        raise ValueError(f"limit must be None or at least 0, got {limit}")
    codings = [c.strip().lower() for c in content_encoding.split(",") if c.strip()]
    if len(codings) > _MAX_CODINGS:
        raise DecodeError(f"{len(codings)} stacked codings; at most {_MAX_CODINGS} are undone")
    stages: list[_Stage] = []
    for coding in reversed(codings):  # the last coding applied is undone first
        make = _CODINGS.get(coding) or _ALSO_UNDONE.get(coding)
        if make is None:
            return None
        stages.append(make())
    if not stages:
        return None
    return BodyDecoder(stages, codings, limit)
