"""Encoders for the decoder tests: every ``Content-Encoding`` skitter decodes, stacks of
them, and streaming with flushes, so that a test can say exactly where a decoded prefix
ends in the compressed bytes."""

from __future__ import annotations

import sys
import zlib

import brotli

if sys.version_info >= (3, 14):
    from compression import zstd
else:
    from backports import zstd

MiB = 1 << 20
CODINGS = ("gzip", "deflate", "br", "zstd")
STACKS = ("gzip, gzip", "gzip, br", "br, zstd", "zstd, deflate")


class _Encoder:
    """One coding, streaming: ``push`` data, ``flush`` so that all of it can be decoded
    from the bytes so far, ``finish`` the stream."""

    def __init__(self, coding: str) -> None:
        self.coding = coding
        if coding in ("gzip", "deflate"):
            self._zlib = zlib.compressobj(6, wbits=31 if coding == "gzip" else 15)
        elif coding == "br":
            self._br = brotli.Compressor(quality=1, lgwin=24)  # brotli's largest window
        elif coding == "zstd":
            # RFC 9659's largest window for HTTP, which skitter accepts.
            self._zstd = zstd.ZstdCompressor(options={zstd.CompressionParameter.window_log: 23})
        else:
            raise ValueError(coding)

    def push(self, data: bytes) -> bytes:
        if self.coding == "br":
            return self._br.process(data)
        if self.coding == "zstd":
            return self._zstd.compress(data)
        return self._zlib.compress(data)

    def flush(self) -> bytes:
        if self.coding == "br":
            return self._br.flush()
        if self.coding == "zstd":
            return self._zstd.flush(zstd.ZstdCompressor.FLUSH_BLOCK)
        return self._zlib.flush(zlib.Z_SYNC_FLUSH)

    def finish(self) -> bytes:
        if self.coding == "br":
            return self._br.finish()
        if self.coding == "zstd":
            return self._zstd.flush()
        return self._zlib.flush()


class Encoder:
    """A ``Content-Encoding`` header value's codings, applied left to right."""

    def __init__(self, header: str) -> None:
        self._stages = [_Encoder(c.strip()) for c in header.split(",")]

    def _through(self, data: bytes, step: str) -> bytes:
        for stage in self._stages:
            data = stage.push(data)
            if step != "push":
                data += getattr(stage, step)()
        return data

    def push(self, data: bytes) -> bytes:
        return self._through(data, "push")

    def flush(self) -> bytes:
        return self._through(b"", "flush")

    def finish(self) -> bytes:
        return self._through(b"", "finish")


def encode(header: str, data: bytes) -> bytes:
    encoder = Encoder(header)
    return encoder.push(data) + encoder.finish()


def zeros_after(header: str, prefix: bytes, mib: int) -> list[bytes]:
    """``prefix`` then ``mib`` MiB of zeros, encoded as two parts: the first decodes to
    exactly ``prefix``, the second to the zeros."""
    encoder = Encoder(header)
    first = encoder.push(prefix) + encoder.flush()
    block = bytes(MiB)
    rest = b"".join(encoder.push(block) for _ in range(mib)) + encoder.finish()
    return [first, rest]
