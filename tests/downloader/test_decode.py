"""The incremental decoder, without a network: formats, chunking, the size cap, the end."""

from __future__ import annotations

import gzip
import tracemalloc
import zlib

import brotli
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from skitter.downloader._decode import (
    ACCEPT_ENCODING,
    DecodeError,
    TruncatedBody,
    decoder_for,
)

from .codings import CODINGS, STACKS, Encoder, encode, zeros_after, zstd

TEXT = b"<html>" + b"skitter decodes this body incrementally. " * 500 + b"</html>"
ALL = CODINGS + STACKS


def raw_deflate(data: bytes) -> bytes:
    obj = zlib.compressobj(wbits=-zlib.MAX_WBITS)
    return obj.compress(data) + obj.flush()


def decode_all(coding: str, data: bytes, limit: int | None = None, chunk: int = 1000) -> bytes:
    decoder = decoder_for(coding, limit)
    assert decoder is not None
    out = [decoder.feed(data[i : i + chunk]) for i in range(0, len(data), chunk)]
    return b"".join(out) + decoder.finish()


def feed_parts(coding: str, parts: list[bytes], limit: int | None) -> tuple[bytes, bool]:
    """Feed ``parts`` as the chunks of one body; stop as a transport does when exceeded."""
    decoder = decoder_for(coding, limit)
    assert decoder is not None
    out = []
    for part in parts:
        out.append(decoder.feed(part))
        if decoder.exceeded:
            return b"".join(out), True
    out.append(decoder.finish())
    return b"".join(out), decoder.exceeded


def split(data: bytes, cuts: list[int]) -> list[bytes]:
    parts, pos = [], 0
    for cut in cuts:
        parts.append(data[pos : pos + cut])
        pos += cut
    return [*parts, data[pos:]]


@pytest.mark.parametrize("coding", ALL)
def test_each_coding_and_stack_decodes(coding: str) -> None:
    assert decode_all(coding, encode(coding, TEXT)) == TEXT


def test_aliases_raw_deflate_and_identity() -> None:
    assert decode_all("x-gzip", gzip.compress(TEXT)) == TEXT
    assert decode_all("deflate", raw_deflate(TEXT)) == TEXT
    assert decode_all("identity", TEXT) == TEXT
    assert decode_all("identity, gzip", gzip.compress(TEXT)) == TEXT


def test_coding_names_are_case_and_space_insensitive() -> None:
    assert decode_all(" GZIP ,  Br", brotli.compress(gzip.compress(TEXT))) == TEXT


def test_accept_encoding_lists_exactly_what_is_decoded() -> None:
    codings = ACCEPT_ENCODING.split(", ")
    assert codings == ["gzip", "deflate", "br", "zstd"]
    assert all(decoder_for(coding, None) is not None for coding in codings)


def test_several_gzip_members_and_zstd_frames_are_all_decoded() -> None:
    assert decode_all("gzip", gzip.compress(b"first ") + gzip.compress(b"second")) == (
        b"first second"
    )
    assert decode_all("zstd", zstd.compress(b"first ") + zstd.compress(b"second"), chunk=3) == (
        b"first second"
    )


def test_garbage_after_a_complete_gzip_or_deflate_stream_is_ignored() -> None:
    assert decode_all("gzip", gzip.compress(TEXT) + b"\x00\x00 trailing junk") == TEXT
    assert decode_all("gzip", gzip.compress(TEXT) + b"\x1f") == TEXT
    assert decode_all("deflate", zlib.compress(TEXT) + b"junk") == TEXT


def test_a_negative_limit_is_a_programming_error() -> None:
    with pytest.raises(ValueError, match="at least 0"):
        decoder_for("gzip", -1)


@pytest.mark.parametrize("header", ["compress", "gzip, foo", "", " , ", "lzma"])
def test_unknown_coding_means_no_decoder(header: str) -> None:
    assert decoder_for(header, None) is None


@pytest.mark.parametrize("coding", CODINGS)
def test_corrupt_data_is_a_decode_error(coding: str) -> None:
    decoder = decoder_for(coding, None)
    assert decoder is not None
    with pytest.raises(DecodeError, match=f"corrupt {coding}"):
        decoder.feed(b"\x1f\x8b\x08\x00this is not compressed at all" * 10)


def test_a_zstd_window_over_8_mib_is_refused() -> None:
    big = zstd.ZstdCompressor(options={zstd.CompressionParameter.window_log: 24})
    data = big.compress(bytes(1 << 20)) + big.flush()
    with pytest.raises(DecodeError, match="corrupt zstd"):
        decode_all("zstd", data)


# -- the end of the body -----------------------------------------------------------------


@pytest.mark.parametrize("coding", ALL)
@pytest.mark.parametrize("keep", [0.2, 0.5, 0.9, -1])
def test_a_body_cut_mid_stream_is_truncated_never_short(coding: str, keep: float) -> None:
    body = encode(coding, TEXT * 20)
    cut = body[:-1] if keep == -1 else body[: int(len(body) * keep)]
    with pytest.raises(TruncatedBody, match="ended before the end of its compressed stream"):
        decode_all(coding, cut)


def test_the_inner_stream_of_a_stack_cut_short_is_truncated() -> None:
    inner = gzip.compress(TEXT * 20)[:-100]  # the outer gzip stream is complete
    with pytest.raises(TruncatedBody, match="gzip"):
        decode_all("gzip, gzip", gzip.compress(inner))


def test_a_second_gzip_member_cut_short_is_truncated() -> None:
    with pytest.raises(TruncatedBody):
        decode_all("gzip", gzip.compress(TEXT) + gzip.compress(TEXT)[:30])


def test_an_empty_body_is_empty_not_truncated() -> None:
    decoder = decoder_for("gzip", 100)
    assert decoder is not None
    assert decoder.feed(b"") == b""
    assert decoder.finish() == b""


@pytest.mark.slow  # every chunking of a big page: seconds even on an idle machine
def test_a_big_brotli_page_arrives_whole_in_any_chunking() -> None:
    page = b"".join(b"<p>line %d of a large brotli page</p>\n" % i for i in range(60_000))
    assert len(page) > 1_600_000
    body = brotli.compress(page)
    for chunk in (1 << 10, 16 << 10, len(body)):
        out = decode_all("br", body, limit=64 << 20, chunk=chunk)
        assert len(out) == len(page)
        assert out == page, "same length, other bytes"


# -- chunk boundaries and the limit --------------------------------------------------------


@settings(max_examples=40, deadline=None)
@given(data=st.binary(max_size=3000), cuts=st.lists(st.integers(1, 500), max_size=20))
@pytest.mark.parametrize("coding", ALL)
def test_chunk_boundaries_do_not_matter(coding: str, data: bytes, cuts: list[int]) -> None:
    assert feed_parts(coding, split(encode(coding, data), cuts), None) == (data, False)


@settings(max_examples=40, deadline=None)
@given(
    data=st.binary(min_size=1, max_size=4000),
    cuts=st.lists(st.integers(1, 300), max_size=15),
    over=st.sampled_from([-1000, -2, -1, 0, 1]),
)
@pytest.mark.parametrize("coding", ALL)
def test_the_limit_is_exact_at_any_chunking(
    coding: str, data: bytes, cuts: list[int], over: int
) -> None:
    """A body of exactly the limit passes whole; one byte more and it is exceeded, with
    exactly ``limit + 1`` bytes decoded."""
    limit = max(0, len(data) + over)
    out, exceeded = feed_parts(coding, split(encode(coding, data), cuts), limit)
    if len(data) <= limit:
        assert (out, exceeded) == (data, False)
    else:
        assert exceeded
        assert out == data[: limit + 1]


@pytest.mark.slow  # a large search: seconds even on an idle machine
@settings(max_examples=25, deadline=None)
@given(size=st.integers(1, 5000), split_at=st.integers(0, 3))
@pytest.mark.parametrize("coding", ALL)
def test_the_limit_reached_at_a_chunk_boundary_still_holds(
    coding: str, size: int, split_at: int
) -> None:
    """The first chunk decodes to exactly the limit: the budget left is 0, which must cap
    every later call at one byte, not lift the cap."""
    prefix = bytes(range(256)) * (size // 256) + bytes(size % 256)
    first, rest = zeros_after(coding, prefix, 8)
    parts = [first, *split(rest, [max(1, len(rest) * split_at // 4)])]
    tracemalloc.start()
    try:
        out, exceeded = feed_parts(coding, parts, len(prefix))
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    assert exceeded
    assert out == prefix + b"\x00"
    assert peak < 4 << 20  # a few pieces, not the 8 MiB of zeros


@pytest.mark.parametrize("coding", [*ALL, "gzip-members"])
def test_a_bomb_in_one_feed_stops_just_past_the_limit(coding: str) -> None:
    limit = 1 << 20
    if coding == "gzip-members":
        coding, bomb = "gzip", gzip.compress(bytes(1 << 20)) * 32
    else:
        encoder = Encoder(coding)
        bomb = b"".join(encoder.push(bytes(1 << 20)) for _ in range(32)) + encoder.finish()
    decoder = decoder_for(coding, limit)
    assert decoder is not None
    tracemalloc.start()
    try:
        out = decoder.feed(bomb)  # the whole bomb at once: the worst case
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    assert len(out) == limit + 1
    assert decoder.exceeded
    assert decoder.feed(b"more") == b""  # a caller that goes on gets nothing more
    assert peak < 4 * limit  # the output, a copy of it, and a piece per stage
