"""AiohttpTransport against real servers on 127.0.0.1: bodies, limits, errors, stats."""

from __future__ import annotations

import asyncio
import gzip
import logging
import zlib
from collections.abc import AsyncIterator, Awaitable, Callable

import brotli
import pytest
from aiohttp import web

from skitter.exceptions import (
    ConnectError,
    ConnectionLost,
    DownloadTimeout,
    InvalidURL,
    RequestError,
    ResponseTooLarge,
)
from skitter.http import Request
from skitter.testing import refused_port

from .codings import zstd
from .conftest import MakeTransport

TEXT = b"<html><body>" + b"hello skitter " * 1000 + b"</body></html>"
MiB = 1 << 20
Handler = Callable[[web.Request], Awaitable[web.StreamResponse]]


def raw_deflate(data: bytes) -> bytes:
    obj = zlib.compressobj(wbits=-zlib.MAX_WBITS)
    return obj.compress(data) + obj.flush()


ENCODED = {
    "gzip": ("gzip", gzip.compress(TEXT)),
    "deflate": ("deflate", zlib.compress(TEXT)),
    "rawdeflate": ("deflate", raw_deflate(TEXT)),
    "br": ("br", brotli.compress(TEXT)),
    "zstd": ("zstd", zstd.compress(TEXT)),
}


async def echo(request: web.Request) -> web.Response:
    body = await request.read()
    return web.json_response(
        {"method": request.method, "headers": dict(request.headers), "body": body.decode()}
    )


async def encoded(request: web.Request) -> web.Response:
    coding, data = ENCODED[request.match_info["name"]]
    return web.Response(body=data, headers={"Content-Encoding": coding})


async def stream(request: web.StreamResponse, resp: web.StreamResponse, total: int) -> None:
    """Write zeros until ``total`` bytes are sent (0: forever) or the client goes away."""
    await resp.prepare(request)  # type: ignore[arg-type]
    chunk, sent = bytes(64 * 1024), 0
    try:
        while not total or sent < total:
            await resp.write(chunk)
            sent += len(chunk)
    except (ConnectionError, RuntimeError):
        pass  # the client cut us off, as it should


async def endless(request: web.Request) -> web.StreamResponse:
    resp = web.StreamResponse()
    await stream(request, resp, 0)
    return resp


async def huge_length(request: web.Request) -> web.StreamResponse:
    resp = web.StreamResponse()
    resp.content_length = 1024 * MiB
    await stream(request, resp, 1024 * MiB)
    return resp


async def sized(request: web.Request) -> web.Response:
    return web.Response(body=bytes(int(request.query["n"])))


def gzip_bomb(size: int) -> bytes:
    obj = zlib.compressobj(9, wbits=31)
    return b"".join(obj.compress(bytes(MiB)) for _ in range(size // MiB)) + obj.flush()


BOMB = gzip_bomb(10 * MiB)


async def bomb(request: web.Request) -> web.Response:
    return web.Response(body=BOMB, headers={"Content-Encoding": "gzip"})


async def until_client_leaves(request: web.Request) -> None:
    """Hang (up to 10 s) until the client closes the connection, then return at once,
    so that the server shuts down without waiting for us."""
    for _ in range(500):
        if request.transport is None or request.transport.is_closing():
            return
        # polls a real socket: aiohttp tells no handler that the client went
        await asyncio.sleep(0.02)


async def sleepy(request: web.Request) -> web.Response:
    await until_client_leaves(request)
    return web.Response(text="too late")


async def stall(request: web.Request) -> web.StreamResponse:
    resp = web.StreamResponse()
    resp.content_length = 1000
    await resp.prepare(request)
    await resp.write(b"x" * 100)
    await until_client_leaves(request)
    return resp


async def reset(request: web.Request) -> web.StreamResponse:
    resp = web.StreamResponse()
    resp.content_length = 100_000
    await resp.prepare(request)
    await resp.write(b"x" * 1000)
    assert request.transport is not None
    request.transport.abort()  # the peer vanishes mid-body
    return resp


def fixed(body: bytes = b"", status: int = 200, **headers: str) -> Handler:
    """A handler that always answers the same; ``Content_Type=`` sets Content-Type."""
    fields = {name.replace("_", "-"): value for name, value in headers.items()}

    async def handler(request: web.Request) -> web.Response:
        return web.Response(body=body, status=status, headers=fields)

    return handler


async def status(request: web.Request) -> web.Response:
    return web.Response(status=int(request.match_info["n"]))


def make_app() -> web.Application:
    app = web.Application()
    app.router.add_route("*", "/echo", echo)
    app.router.add_get("/text", fixed(TEXT, Content_Type="text/html"))
    app.router.add_get("/enc/{name}", encoded)
    app.router.add_get("/compress", fixed(b"\x1f\x9d\x90", Content_Encoding="compress"))
    app.router.add_get("/corrupt", fixed(b"not gzip" * 50, Content_Encoding="gzip"))
    app.router.add_get("/endless", endless)
    app.router.add_get("/huge", huge_length)
    app.router.add_get("/sized", sized)
    app.router.add_get("/bomb", bomb)
    app.router.add_get("/sleep", sleepy)
    app.router.add_get("/stall", stall)
    app.router.add_get("/reset", reset)
    app.router.add_get("/status/{n}", status)
    return app


@pytest.fixture
async def base(serve) -> str:  # type: ignore[no-untyped-def]
    return await serve(make_app())


# -- plain exchanges -------------------------------------------------------------------


async def test_get_returns_status_headers_body_and_counts(
    base: str, make_transport: MakeTransport
) -> None:
    transport, stats = await make_transport()
    request = Request(f"{base}/text")
    response = await transport.fetch(request)
    assert response.status == 200
    assert response.body == TEXT
    assert response.url == request.url
    assert response.request is request
    assert response.headers["Content-Type"].startswith(b"text/html")
    assert response.ip_address == "127.0.0.1"
    assert request.meta["download_latency"] >= 0
    assert stats.values == {
        "downloader/request_count": 1,
        "downloader/request_method_count/GET": 1,
        "downloader/response_count": 1,
        "downloader/response_status_count/200": 1,
        "downloader/response_bytes": len(TEXT),
    }


async def test_request_carries_exactly_its_own_headers_and_body(
    base: str, make_transport: MakeTransport
) -> None:
    transport, stats = await make_transport()
    request = Request(f"{base}/echo", method="POST", body="a=1", headers={"X-Test": "yes"})
    sent = (await transport.fetch(request)).json()
    assert sent["method"] == "POST"
    assert sent["body"] == "a=1"
    assert sent["headers"]["X-Test"] == "yes"
    # No aiohttp User-Agent and no Accept-Encoding: those belong to the middlewares.
    assert "User-Agent" not in sent["headers"]
    assert "Accept-Encoding" not in sent["headers"]
    assert stats.values["downloader/request_method_count/POST"] == 1


async def test_error_statuses_are_responses(base: str, make_transport: MakeTransport) -> None:
    transport, stats = await make_transport()
    for status in (404, 503):
        assert (await transport.fetch(Request(f"{base}/status/{status}"))).status == status
    assert stats.values["downloader/response_status_count/404"] == 1
    assert stats.values["downloader/response_status_count/503"] == 1


async def test_head_request_with_large_content_length_is_not_refused(
    base: str, make_transport: MakeTransport
) -> None:
    transport, _ = await make_transport({"DOWNLOAD_MAXSIZE": 100})
    response = await transport.fetch(Request(f"{base}/sized?n=5000", method="HEAD"))
    assert response.status == 200
    assert response.body == b""


# -- content encodings -----------------------------------------------------------------


@pytest.mark.parametrize("name", sorted(ENCODED))
async def test_encoded_bodies_are_decoded(
    name: str, base: str, make_transport: MakeTransport
) -> None:
    transport, stats = await make_transport()
    response = await transport.fetch(Request(f"{base}/enc/{name}"))
    assert response.body == TEXT
    assert "Content-Encoding" not in response.headers
    assert response.flags == [f"decoded:{ENCODED[name][0]}"]
    assert stats.values["downloader/response_bytes"] == len(TEXT)


async def test_unknown_encoding_passes_through_untouched(
    base: str, make_transport: MakeTransport
) -> None:
    transport, _ = await make_transport()
    response = await transport.fetch(Request(f"{base}/compress"))
    assert response.body == b"\x1f\x9d\x90"
    assert response.headers["Content-Encoding"] == b"compress"
    assert response.flags == []


async def test_corrupt_encoded_body_is_a_clear_error(
    base: str, make_transport: MakeTransport
) -> None:
    transport, stats = await make_transport()
    request = Request(f"{base}/corrupt")
    with pytest.raises(ConnectionLost, match=r"cannot decode body.*gzip") as info:
        await transport.fetch(request)
    assert info.value.request is request
    assert request.url in str(info.value)
    assert stats.values["downloader/exception_type_count/ConnectionLost"] == 1


# -- size limits -----------------------------------------------------------------------


async def test_content_length_over_maxsize_is_refused_before_reading(
    base: str, make_transport: MakeTransport
) -> None:
    transport, stats = await make_transport({"DOWNLOAD_MAXSIZE": MiB})
    request = Request(f"{base}/huge")
    with pytest.raises(ResponseTooLarge, match="Content-Length 1073741824") as info:
        await transport.fetch(request)
    assert info.value.request is request
    assert stats.values["downloader/exception_count"] == 1
    assert stats.values["downloader/exception_type_count/ResponseTooLarge"] == 1
    assert "downloader/response_count" not in stats.values


async def test_endless_body_is_cut_off(base: str, make_transport: MakeTransport) -> None:
    transport, _ = await make_transport({"DOWNLOAD_MAXSIZE": MiB})
    with pytest.raises(ResponseTooLarge, match="cut off"):
        await transport.fetch(Request(f"{base}/endless"))


async def test_gzip_bomb_is_cut_off_at_the_decoded_limit(
    base: str, make_transport: MakeTransport
) -> None:
    assert len(BOMB) < MiB  # the compressed body alone would pass the limit
    transport, _ = await make_transport({"DOWNLOAD_MAXSIZE": MiB})
    with pytest.raises(ResponseTooLarge, match="decoded body"):
        await transport.fetch(Request(f"{base}/bomb"))


async def test_meta_download_maxsize_overrides_the_setting(
    base: str, make_transport: MakeTransport
) -> None:
    transport, _ = await make_transport({"DOWNLOAD_MAXSIZE": 100})
    response = await transport.fetch(Request(f"{base}/sized?n=5000", meta={"download_maxsize": 0}))
    assert len(response.body) == 5000
    with pytest.raises(ResponseTooLarge):
        await transport.fetch(Request(f"{base}/sized?n=5000"))


async def test_body_of_exactly_maxsize_is_accepted(
    base: str, make_transport: MakeTransport
) -> None:
    transport, _ = await make_transport({"DOWNLOAD_MAXSIZE": 5000})
    assert len((await transport.fetch(Request(f"{base}/sized?n=5000"))).body) == 5000


@pytest.mark.parametrize("path", ["/sized?n=5000", "/enc/gzip"])
async def test_warnsize_logs_one_warning_per_response(
    path: str, base: str, make_transport: MakeTransport, caplog: pytest.LogCaptureFixture
) -> None:
    transport, _ = await make_transport({"DOWNLOAD_WARNSIZE": 1000})
    with caplog.at_level(logging.WARNING, logger="skitter.downloader"):
        await transport.fetch(Request(f"{base}{path}"))
    warnings = [r for r in caplog.records if "DOWNLOAD_WARNSIZE" in r.getMessage()]
    assert len(warnings) == 1
    assert base in warnings[0].getMessage()


# -- timeouts and broken connections ---------------------------------------------------


async def test_total_timeout_per_request(base: str, make_transport: MakeTransport) -> None:
    transport, stats = await make_transport()
    request = Request(f"{base}/sleep", meta={"download_timeout": 0.2})
    with pytest.raises(DownloadTimeout, match=r"longer than 0\.2 seconds") as info:
        await transport.fetch(request)
    assert info.value.request is request
    assert stats.values["downloader/exception_type_count/DownloadTimeout"] == 1


async def test_read_timeout_when_the_server_stalls_mid_body(
    base: str, make_transport: MakeTransport
) -> None:
    transport, _ = await make_transport({"DOWNLOAD_READ_TIMEOUT": 0.2})
    with pytest.raises(DownloadTimeout, match="read timeout"):
        await transport.fetch(Request(f"{base}/stall"))


async def test_connection_reset_mid_body_is_connection_lost(
    base: str, make_transport: MakeTransport
) -> None:
    transport, _ = await make_transport()
    request = Request(f"{base}/reset")
    with pytest.raises(ConnectionLost) as info:
        await transport.fetch(request)
    assert info.value.request is request
    assert request.url in str(info.value)


@pytest.fixture
async def garbage_server() -> AsyncIterator[str]:
    """A TCP server that answers anything with bytes that are not HTTP."""

    async def answer(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        await reader.read(1024)
        writer.write(b"SPAM SPAM SPAM\r\n\r\n")
        await writer.drain()
        writer.close()

    server = await asyncio.start_server(answer, "127.0.0.1", 0)
    port = server.sockets[0].getsockname()[1]
    try:
        yield f"http://127.0.0.1:{port}"
    finally:
        server.close()
        await server.wait_closed()


async def test_broken_http_is_connection_lost(
    garbage_server: str, make_transport: MakeTransport
) -> None:
    transport, _ = await make_transport()
    with pytest.raises(ConnectionLost, match=r"invalid HTTP response|connection lost"):
        await transport.fetch(Request(f"{garbage_server}/"))


async def test_refused_connection_is_connect_error(make_transport: MakeTransport) -> None:
    transport, stats = await make_transport()
    request = Request(f"http://127.0.0.1:{refused_port()}/")
    with pytest.raises(ConnectError, match="cannot connect") as info:
        await transport.fetch(request)
    assert info.value.request is request
    assert stats.values["downloader/exception_type_count/ConnectError"] == 1


# -- URLs that cannot be fetched -------------------------------------------------------


@pytest.mark.parametrize(
    "url",
    ["ftp://127.0.0.1/file", "mailto:someone@example.com", "file:///etc/passwd", "data:,hi"],
)
async def test_unsupported_schemes_are_invalid_urls(
    url: str, make_transport: MakeTransport
) -> None:
    transport, stats = await make_transport()
    request = Request(url)
    with pytest.raises(InvalidURL, match="only http:// and https://") as info:
        await transport.fetch(request)
    assert info.value.request is request
    assert stats.values["downloader/exception_type_count/InvalidURL"] == 1


@pytest.mark.parametrize("url", ["http://", "http://127.0.0.1:99999/", "http://[::1/"])
async def test_unparseable_urls_are_invalid_urls(url: str, make_transport: MakeTransport) -> None:
    transport, _ = await make_transport()
    with pytest.raises(InvalidURL, match="invalid URL"):
        await transport.fetch(Request(url))


async def test_bad_header_value_is_a_request_error(
    base: str, make_transport: MakeTransport
) -> None:
    transport, _ = await make_transport()
    request = Request(f"{base}/echo", headers={"X-Evil": "a\r\nInjected: yes"})
    with pytest.raises(RequestError, match="cannot send") as info:
        await transport.fetch(request)
    assert info.value.request is request


async def test_fetch_before_open_is_a_programming_error(make_transport: MakeTransport) -> None:
    transport, _ = await make_transport()
    await transport.close()
    with pytest.raises(RuntimeError, match="before open"):
        await transport.fetch(Request("http://127.0.0.1/"))
