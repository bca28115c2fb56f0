"""DOWNLOAD_FAIL_ON_DATALOSS and the per-request limits in meta (download_warnsize,
download_fail_on_dataloss), and download_latency on the response of a real crawl.

Bodies that end early come from a raw socket server, since aiohttp.web always finishes
what it starts: a Content-Length it never reaches, a chunked body without its last
chunk, a gzip stream cut in the middle."""

from __future__ import annotations

import asyncio
import gzip
import logging
from collections.abc import AsyncIterator
from typing import Any

import pytest
from aiohttp import web

from skitter import Crawler, Request, Response, Spider
from skitter.exceptions import ConnectionLost

from .conftest import HTTP_TRANSPORTS, MakeTransport

PAGE = b"<html>" + b"x" * 20_000 + b"</html>"
GZIPPED = gzip.compress(PAGE)

ANSWERS = {
    # A Content-Length the server never reaches: half the body, then the close.
    "/length": b"HTTP/1.1 200 OK\r\nContent-Length: %d\r\nConnection: close\r\n\r\n%s"
    % (len(PAGE), PAGE[: len(PAGE) // 2]),
    # Chunked, without the last (empty) chunk.
    "/chunked": b"HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\nConnection: close\r\n\r\n"
    + b"%x\r\n%s\r\n" % (1000, PAGE[:1000]),
    # A gzip stream cut in half, its end marked by the close.
    "/gzip": b"HTTP/1.1 200 OK\r\nContent-Encoding: gzip\r\nConnection: close\r\n\r\n"
    + GZIPPED[: len(GZIPPED) // 2],
}


async def whole(request: web.Request) -> web.Response:
    return web.Response(body=PAGE)


@pytest.fixture
async def cutting_server() -> AsyncIterator[str]:
    async def answer(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        head = await reader.readuntil(b"\r\n\r\n")
        path = head.split(b" ", 2)[1].decode()
        writer.write(ANSWERS[path])
        await writer.drain()
        writer.close()

    server = await asyncio.start_server(answer, "127.0.0.1", 0)
    port = server.sockets[0].getsockname()[1]
    try:
        yield f"http://127.0.0.1:{port}"
    finally:
        server.close()
        await server.wait_closed()


@pytest.mark.parametrize("via", HTTP_TRANSPORTS)
@pytest.mark.parametrize("path", sorted(ANSWERS))
async def test_a_body_that_ends_early_fails_by_default(
    path: str, via: str, cutting_server: str, make_transport: MakeTransport
) -> None:
    transport, stats = await make_transport(None, via)
    with pytest.raises(ConnectionLost, match="DOWNLOAD_FAIL_ON_DATALOSS=False would pass it on"):
        await transport.fetch(Request(cutting_server + path))
    assert "downloader/response_count" not in stats.values


@pytest.mark.parametrize("via", HTTP_TRANSPORTS)
@pytest.mark.parametrize("path", sorted(ANSWERS))
async def test_without_fail_on_dataloss_the_bytes_received_are_the_response(
    path: str, via: str, cutting_server: str, make_transport: MakeTransport
) -> None:
    transport, _ = await make_transport({"DOWNLOAD_FAIL_ON_DATALOSS": False}, via)
    response = await transport.fetch(Request(cutting_server + path))
    assert response.status == 200
    assert "dataloss" in response.flags
    assert 0 < len(response.body) < len(PAGE)
    assert PAGE.startswith(response.body)


@pytest.mark.parametrize("via", HTTP_TRANSPORTS)
async def test_meta_overrides_the_setting_both_ways(
    via: str, cutting_server: str, make_transport: MakeTransport
) -> None:
    transport, _ = await make_transport({"DOWNLOAD_FAIL_ON_DATALOSS": False}, via)
    with pytest.raises(ConnectionLost):
        await transport.fetch(
            Request(cutting_server + "/length", meta={"download_fail_on_dataloss": True})
        )
    strict, _ = await make_transport(None, via)
    response = await strict.fetch(
        Request(cutting_server + "/gzip", meta={"download_fail_on_dataloss": False})
    )
    assert response.flags == ["decoded:gzip", "dataloss"]


async def test_a_whole_body_has_no_dataloss_flag(serve: Any, make_transport: MakeTransport) -> None:
    app = web.Application()
    app.router.add_get("/", whole)
    base = await serve(app)
    transport, _ = await make_transport({"DOWNLOAD_FAIL_ON_DATALOSS": False})
    response = await transport.fetch(Request(base + "/"))
    assert response.body == PAGE
    assert response.flags == []


async def test_meta_download_warnsize_overrides_the_setting(
    serve: Any, make_transport: MakeTransport, caplog: pytest.LogCaptureFixture
) -> None:
    app = web.Application()
    app.router.add_get("/", whole)
    base = await serve(app)
    transport, _ = await make_transport({"DOWNLOAD_WARNSIZE": 0})
    with caplog.at_level(logging.WARNING, logger="skitter.downloader"):
        await transport.fetch(Request(base + "/"))
        assert "DOWNLOAD_WARNSIZE" not in caplog.text
        await transport.fetch(Request(base + "/", meta={"download_warnsize": 1000}))
    warnings = [r for r in caplog.records if "DOWNLOAD_WARNSIZE (1000 bytes)" in r.getMessage()]
    assert len(warnings) == 1


class Latency(Spider):
    name = "latency"
    custom_settings = {"ROBOTSTXT_OBEY": False, "LOG_LEVEL": "WARNING"}

    def start_requests(self) -> Any:
        yield Request(self.settings["BASE"] + "/slow")

    seen: list[float] = []

    def parse(self, response: Response) -> Any:
        self.seen.append(response.meta["download_latency"])
        yield {"url": response.url}


async def test_download_latency_reaches_the_callback(serve: Any) -> None:
    async def slow(request: web.Request) -> web.Response:
        await asyncio.sleep(0.05)  # the site's own pace: the latency to measure
        return web.Response(text="<html></html>", content_type="text/html")

    app = web.Application()
    app.router.add_get("/slow", slow)
    base = await serve(app)
    stats = await Crawler(Latency, {"BASE": base}).run()
    assert stats["item_scraped_count"] == 1
    [latency] = Latency.seen
    assert latency >= 0.05
