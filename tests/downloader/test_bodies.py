"""Bodies through each HTTP transport and real servers: big compressed pages arrive whole,
cut ones fail loudly, the decoded limit is exact, response headers are bounded."""

from __future__ import annotations

import asyncio
import hashlib
from collections.abc import AsyncIterator

import brotli
import pytest
from aiohttp import web

from skitter.downloader import AiohttpTransport
from skitter.exceptions import ConfigError, ConnectionLost, ResponseTooLarge
from skitter.http import Request
from skitter.settings import Settings

from .codings import CODINGS, STACKS, encode
from .conftest import HTTP_TRANSPORTS, MakeTransport

MiB = 1 << 20
PAGE = b"".join(
    b"<p>row %d of a page that is several megabytes long</p>\n" % i for i in range(80_000)
)
PAGE_SHA1 = hashlib.sha1(PAGE).digest()
BODIES = {coding: encode(coding, PAGE) for coding in CODINGS + STACKS}


async def write_in(
    request: web.Request, body: bytes, step: int, **headers: str
) -> web.StreamResponse:
    """Send ``body`` chunked, ``step`` bytes a write."""
    resp = web.StreamResponse(headers=headers)
    await resp.prepare(request)
    for pos in range(0, len(body), step):
        await resp.write(body[pos : pos + step])
    await resp.write_eof()
    return resp


async def page(request: web.Request) -> web.StreamResponse:
    coding = request.query["coding"]
    step = int(request.query["step"])
    return await write_in(request, BODIES[coding], step, **{"Content-Encoding": coding})


async def cut(request: web.Request) -> web.StreamResponse:
    """The body cut short, sent as a complete HTTP message: with a Content-Length that
    matches the cut body, or chunked and properly ended."""
    coding = request.query["coding"]
    body = BODIES[coding][: int(len(BODIES[coding]) * float(request.query["keep"]))]
    if request.query["framing"] == "length":
        return web.Response(body=body, headers={"Content-Encoding": coding})
    return await write_in(request, body, 16 * 1024, **{"Content-Encoding": coding})


async def sized(request: web.Request) -> web.Response:
    coding, size = request.query["coding"], int(request.query["size"])
    return web.Response(body=encode(coding, b"x" * size), headers={"Content-Encoding": coding})


async def stacked(request: web.Request) -> web.Response:
    header = ", ".join(["gzip"] * int(request.query["n"]))
    return web.Response(body=encode(header, b"deep"), headers={"Content-Encoding": header})


async def many_headers(request: web.Request) -> web.Response:
    lines, size = int(request.query["lines"]), int(request.query["size"])
    headers = {f"X-Big-{i}": "v" * size for i in range(lines)}
    return web.Response(text="ok", headers=headers)


@pytest.fixture
async def base(serve) -> str:  # type: ignore[no-untyped-def]
    app = web.Application()
    app.router.add_get("/page", page)
    app.router.add_get("/cut", cut)
    app.router.add_get("/sized", sized)
    app.router.add_get("/headers", many_headers)
    app.router.add_get("/stacked", stacked)
    return await serve(app)


@pytest.fixture
async def closing_server() -> AsyncIterator[str]:
    """A server that sends a cut compressed body the HTTP/1.0 way: no Content-Length,
    no chunks, the end of the body is the server closing the connection."""

    async def answer(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        head = await reader.readuntil(b"\r\n\r\n")
        coding = head.split(b" ", 2)[1].decode().lstrip("/").replace("%20", " ")
        body = BODIES[coding][: len(BODIES[coding]) // 2]
        writer.write(
            b"HTTP/1.1 200 OK\r\nContent-Encoding: %s\r\nConnection: close\r\n\r\n"
            % coding.encode()
        )
        writer.write(body)
        await writer.drain()
        writer.close()

    server = await asyncio.start_server(answer, "127.0.0.1", 0)
    port = server.sockets[0].getsockname()[1]
    try:
        yield f"http://127.0.0.1:{port}"
    finally:
        server.close()
        await server.wait_closed()


# -- big pages arrive whole ----------------------------------------------------------------


@pytest.mark.parametrize("via", HTTP_TRANSPORTS)
@pytest.mark.parametrize("step", [1024, 256 * 1024])
@pytest.mark.parametrize("coding", CODINGS + STACKS)
async def test_a_big_compressed_page_arrives_whole(
    coding: str, step: int, via: str, base: str, make_transport: MakeTransport
) -> None:
    assert len(PAGE) > 4 * MiB
    transport, stats = await make_transport(None, via)  # the default DOWNLOAD_MAXSIZE
    response = await transport.fetch(Request(f"{base}/page?coding={coding}&step={step}"))
    assert response.status == 200
    assert len(response.body) == len(PAGE)
    assert hashlib.sha1(response.body).digest() == PAGE_SHA1  # no megabyte diffs on failure
    assert response.flags == [f"decoded:{coding}"]
    assert stats.values["downloader/response_bytes"] == len(PAGE)


async def test_a_brotli_page_over_half_a_megabyte_is_not_cut(
    base: str, make_transport: MakeTransport
) -> None:
    """The case reported: a 1.6 MB br page came back as 524 KB, status 200, no error."""
    transport, _ = await make_transport()
    response = await transport.fetch(Request(f"{base}/page?coding=br&step=16384"))
    assert len(brotli.decompress(BODIES["br"])) == len(response.body) == len(PAGE)


# -- cut bodies are errors, never pages ------------------------------------------------------


@pytest.mark.parametrize("via", HTTP_TRANSPORTS)
@pytest.mark.parametrize("framing", ["length", "chunked"])
@pytest.mark.parametrize("keep", ["0.1", "0.5", "0.999"])
@pytest.mark.parametrize("coding", CODINGS + STACKS)
async def test_a_body_cut_mid_stream_is_connection_lost(
    coding: str, keep: str, framing: str, via: str, base: str, make_transport: MakeTransport
) -> None:
    transport, stats = await make_transport(None, via)
    request = Request(f"{base}/cut?coding={coding}&keep={keep}&framing={framing}")
    with pytest.raises(
        ConnectionLost, match=r"body truncated: .* ended before the end of its"
    ) as info:
        await transport.fetch(request)
    assert info.value.request is request
    assert stats.values["downloader/exception_type_count/ConnectionLost"] == 1
    assert "downloader/response_count" not in stats.values


@pytest.mark.parametrize("via", HTTP_TRANSPORTS)
@pytest.mark.parametrize("coding", ["gzip", "br", "zstd", "gzip, br"])
async def test_a_body_cut_by_the_server_closing_is_connection_lost(
    coding: str, via: str, closing_server: str, make_transport: MakeTransport
) -> None:
    transport, _ = await make_transport(None, via)
    with pytest.raises(ConnectionLost, match="body truncated"):
        await transport.fetch(Request(f"{closing_server}/{coding}"))


# -- the decoded limit is exact ---------------------------------------------------------------


@pytest.mark.parametrize("via", HTTP_TRANSPORTS)
@pytest.mark.parametrize("coding", CODINGS + STACKS)
async def test_a_decoded_body_of_exactly_the_limit_passes_and_one_more_byte_fails(
    coding: str, via: str, base: str, make_transport: MakeTransport
) -> None:
    transport, _ = await make_transport({"DOWNLOAD_MAXSIZE": MiB}, via)
    response = await transport.fetch(Request(f"{base}/sized?coding={coding}&size={MiB}"))
    assert len(response.body) == MiB
    with pytest.raises(ResponseTooLarge, match="decoded body is larger than DOWNLOAD_MAXSIZE"):
        await transport.fetch(Request(f"{base}/sized?coding={coding}&size={MiB + 1}"))


# -- response headers are bounded ------------------------------------------------------------


async def test_headers_over_download_max_headers_size_are_refused_and_counted(
    base: str, make_transport: MakeTransport
) -> None:
    transport, stats = await make_transport()  # 256 KiB by default
    request = Request(f"{base}/headers?lines=12&size={30 * 1024}")
    with pytest.raises(
        ResponseTooLarge, match=r"response headers of \d+ bytes .* DOWNLOAD_MAX_HEADERS_SIZE"
    ) as info:
        await transport.fetch(request)
    assert info.value.request is request
    assert "vvvv" not in str(info.value)  # what a header says is never shown
    assert stats.values["downloader/exception_type_count/ResponseTooLarge"] == 1
    response = await transport.fetch(Request(f"{base}/headers?lines=6&size={30 * 1024}"))
    assert response.status == 200


@pytest.mark.parametrize("via", ["httpx", "curl"])
async def test_the_optional_transports_bound_headers_too(
    via: str, base: str, make_transport: MakeTransport
) -> None:
    transport, stats = await make_transport({"DOWNLOAD_MAX_HEADERS_SIZE": 64 * 1024}, via)
    with pytest.raises(ResponseTooLarge, match=r"response headers of \d+ bytes .* DOWNLOAD_MAX"):
        await transport.fetch(Request(f"{base}/headers?lines=3&size={30 * 1024}"))
    with pytest.raises(ResponseTooLarge, match=r"over (h11|libcurl)'s limit .*; not downloaded"):
        await transport.fetch(Request(f"{base}/headers?lines=20&size={30 * 1024}"))
    assert stats.values["downloader/exception_type_count/ResponseTooLarge"] == 2
    response = await transport.fetch(Request(f"{base}/headers?lines=1&size={30 * 1024}"))
    assert response.status == 200


async def test_download_max_headers_size_0_leaves_only_aiohttps_limits(
    base: str, make_transport: MakeTransport
) -> None:
    transport, _ = await make_transport({"DOWNLOAD_MAX_HEADERS_SIZE": 0})
    response = await transport.fetch(Request(f"{base}/headers?lines=100&size={30 * 1024}"))
    assert len(response.headers) > 100


@pytest.mark.parametrize(
    ("query", "problem"),
    [("lines=200&size=10", "too many lines"), (f"lines=1&size={40 * 1024}", "a line is longer")],
)
@pytest.mark.parametrize("cap", [0, 256 * 1024])
async def test_headers_over_aiohttps_limits_are_response_too_large(
    query: str, problem: str, cap: int, base: str, make_transport: MakeTransport
) -> None:
    """Not a ConnectionLost: a retry would get the same headers."""
    transport, stats = await make_transport({"DOWNLOAD_MAX_HEADERS_SIZE": cap})
    with pytest.raises(ResponseTooLarge, match=problem) as info:
        await transport.fetch(Request(f"{base}/headers?{query}"))
    assert "vvvv" not in str(info.value)
    assert stats.values["downloader/exception_type_count/ResponseTooLarge"] == 1


async def test_more_than_five_stacked_codings_are_refused(
    base: str, make_transport: MakeTransport
) -> None:
    transport, _ = await make_transport()
    assert (await transport.fetch(Request(f"{base}/stacked?n=5"))).body == b"deep"
    with pytest.raises(ConnectionLost, match="6 stacked codings; at most 5"):
        await transport.fetch(Request(f"{base}/stacked?n=6"))


@pytest.mark.parametrize(
    "name", ["DOWNLOAD_MAXSIZE", "DOWNLOAD_WARNSIZE", "DOWNLOAD_MAX_HEADERS_SIZE"]
)
def test_negative_size_limits_are_refused_at_start(name: str) -> None:
    with pytest.raises(ConfigError, match=f"{name} must be 0"):
        AiohttpTransport(Settings({name: -1}), None)  # type: ignore[arg-type]
