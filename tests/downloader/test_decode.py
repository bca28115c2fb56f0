"""The incremental decoder, without a network: formats, chunking, the size cap."""

from __future__ import annotations

import gzip
import tracemalloc
import zlib

import brotli
import pytest
from hypothesis import given
from hypothesis import strategies as st

from skitter.downloader._decode import DecodeError, decoder_for

TEXT = b"<html>" + b"skitter decodes this body incrementally. " * 500 + b"</html>"


def raw_deflate(data: bytes) -> bytes:
    obj = zlib.compressobj(wbits=-zlib.MAX_WBITS)
    return obj.compress(data) + obj.flush()


ENCODED = {
    "gzip": gzip.compress(TEXT),
    "x-gzip": gzip.compress(TEXT),
    "deflate": zlib.compress(TEXT),
    "br": brotli.compress(TEXT),
    "identity": TEXT,
}


def decode_all(coding: str, data: bytes, limit: int = 0, chunk: int = 1000) -> bytes:
    decoder = decoder_for(coding, limit)
    assert decoder is not None
    return b"".join(decoder.feed(data[i : i + chunk]) for i in range(0, len(data), chunk))


@pytest.mark.parametrize("coding", sorted(ENCODED))
def test_each_coding_decodes(coding: str) -> None:
    assert decode_all(coding, ENCODED[coding]) == TEXT


def test_raw_deflate_is_accepted_as_servers_send_it() -> None:
    assert decode_all("deflate", raw_deflate(TEXT)) == TEXT


def test_coding_names_are_case_and_space_insensitive() -> None:
    assert decode_all(" GZIP ", ENCODED["gzip"]) == TEXT


def test_several_gzip_members_are_all_decoded() -> None:
    assert decode_all("gzip", gzip.compress(b"first ") + gzip.compress(b"second")) == (
        b"first second"
    )


def test_stacked_codings_are_undone_right_to_left() -> None:
    data = brotli.compress(gzip.compress(TEXT))  # gzip applied first, then br
    assert decode_all("gzip, br", data) == TEXT


@pytest.mark.parametrize("header", ["compress", "zstd", "gzip, foo", "", " , "])
def test_unknown_coding_means_no_decoder(header: str) -> None:
    assert decoder_for(header, 0) is None


@pytest.mark.parametrize("coding", ["gzip", "deflate", "br"])
def test_corrupt_data_is_a_decode_error(coding: str) -> None:
    decoder = decoder_for(coding, 0)
    assert decoder is not None
    with pytest.raises(DecodeError, match=coding):
        decoder.feed(b"\x1f\x8b\x08\x00this is not compressed at all" * 10)


@given(data=st.binary(max_size=3000), cuts=st.lists(st.integers(1, 500), max_size=20))
@pytest.mark.parametrize("coding", ["gzip", "deflate", "br"])
def test_chunk_boundaries_do_not_matter(coding: str, data: bytes, cuts: list[int]) -> None:
    encoded = {"gzip": gzip.compress, "deflate": zlib.compress, "br": brotli.compress}[coding](data)
    decoder = decoder_for(coding, 0)
    assert decoder is not None
    out, pos = [], 0
    for cut in cuts:
        out.append(decoder.feed(encoded[pos : pos + cut]))
        pos += cut
    out.append(decoder.feed(encoded[pos:]))
    assert b"".join(out) == data


def zero_bomb(coding: str, size: int) -> bytes:
    block = bytes(1 << 20)
    if coding == "br":
        return brotli.compress(bytes(size), quality=1)
    obj = zlib.compressobj(9, wbits=31 if coding == "gzip" else zlib.MAX_WBITS)
    return b"".join(obj.compress(block) for _ in range(size >> 20)) + obj.flush()


@pytest.mark.parametrize("coding", ["gzip", "deflate", "br"])
def test_a_bomb_stops_just_past_the_limit_in_one_feed(coding: str) -> None:
    bomb = zero_bomb(coding, 32 << 20)
    limit = 1 << 20
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
    assert peak < 4 * limit  # the output, a copy of it, and the decompressor's window


def test_the_limit_is_exact_and_cumulative() -> None:
    decoder = decoder_for("gzip", len(TEXT))
    assert decoder is not None
    assert decode_all("gzip", ENCODED["gzip"], limit=len(TEXT)) == TEXT
    decoder = decoder_for("gzip", len(TEXT) - 1)
    assert decoder is not None
    data = ENCODED["gzip"]
    total = sum(len(decoder.feed(data[i : i + 100])) for i in range(0, len(data), 100))
    assert decoder.exceeded
    assert total >= len(TEXT)
