"""A failed download names its cause as the OS or the TLS library gave it, whatever the
transport: a closed port on 127.0.0.1 is "Connection refused" (libcurl says it its own
way), an https:// request to a plain-HTTP port says OpenSSL's wrong version number and
asks whether the port is plain HTTP; the stats count each failure by its cause too."""

from __future__ import annotations

from typing import Any

import pytest
from aiohttp import web

from skitter import Request
from skitter.downloader._causes import curl_cause, curl_detail, os_cause, tls_hint
from skitter.engine._outcome import failure_reason
from skitter.exceptions import ConnectError
from skitter.testing import refused_port

from .conftest import HTTP_TRANSPORTS, MakeTransport

#: What each client library lets through of a refused connection.
REFUSED = {"aiohttp": "Connection refused", "httpx": "Connection refused"}


async def plain_http_port(serve: Any) -> int:
    async def page(request: web.Request) -> web.Response:
        return web.Response(text="plain")

    app = web.Application()
    app.router.add_get("/", page)
    return int((await serve(app)).rsplit(":", 1)[1])


@pytest.mark.parametrize("name", HTTP_TRANSPORTS)
async def test_a_closed_port_is_named_as_refused(name: str, make_transport: MakeTransport) -> None:
    transport, stats = await make_transport(name=name)
    request = Request(f"http://127.0.0.1:{refused_port()}/")
    with pytest.raises(ConnectError) as info:
        await transport.fetch(request)
    error = info.value
    assert error.cause, "the cause is known"
    assert str(error).startswith(f"{request!r}: cannot connect: ")
    assert str(error).endswith(error.cause)
    if name in REFUSED:
        assert error.cause == REFUSED[name]
    else:  # libcurl's own words, without curl_cffi's frame
        assert "connect" in error.cause.lower()
        assert "Failed to perform" not in str(error) and "curl.se" not in str(error)
    assert "127.0.0.1" not in error.cause  # counted by it: no host, no port
    assert failure_reason(error) == f"ConnectError: {str(error)[len(repr(request)) + 2 :]}"
    key = "downloader/exception_type_count/ConnectError"
    assert stats.values[key] == 1
    assert stats.values[f"{key}/{error.cause}"] == 1


@pytest.mark.parametrize("name", HTTP_TRANSPORTS)
async def test_https_to_a_plain_http_port_says_so(
    name: str, make_transport: MakeTransport, serve: Any
) -> None:
    port = await plain_http_port(serve)
    transport, stats = await make_transport(name=name)
    with pytest.raises(ConnectError) as info:
        await transport.fetch(Request(f"https://127.0.0.1:{port}/"))
    error = info.value
    assert "WRONG_VERSION_NUMBER" in str(error)
    assert "is this port plain HTTP?" in str(error)
    assert error.cause is not None and "WRONG_VERSION_NUMBER" in error.cause
    assert "plain HTTP" not in error.cause  # the library's words only: the hint is ours
    key = f"downloader/exception_type_count/ConnectError/{error.cause}"
    assert stats.values[key] == 1


def test_the_cause_is_found_below_the_wrappers() -> None:
    refused = ConnectionRefusedError(111, "Connect call failed ('127.0.0.1', 1)")
    wrapper = OSError("All connection attempts failed")
    wrapper.__cause__ = ExceptionGroup("attempts", [OSError("no errno"), refused])
    outer = RuntimeError("client error")
    outer.__cause__ = wrapper
    assert os_cause(outer) == "Connection refused"
    assert os_cause(RuntimeError("nothing below")) is None


def test_curl_messages_lose_their_frame_and_keep_their_last_words() -> None:
    text = (
        "Failed to perform, curl: (7) Failed to connect to 127.0.0.1 port 1 after 0 ms: "
        "Could not connect to server. See https://curl.se/libcurl/c/libcurl-errors.html "
        "first for more details."
    )
    assert curl_detail(text) == (
        "Failed to connect to 127.0.0.1 port 1 after 0 ms: Could not connect to server"
    )
    assert curl_cause(text) == "Could not connect to server"


def test_only_a_plain_http_answer_gets_the_hint() -> None:
    assert tls_hint("[SSL: WRONG_VERSION_NUMBER] wrong version number")
    assert tls_hint("[SSL: RECORD_LAYER_FAILURE] record layer failure")
    assert tls_hint("[SSL: SSLV3_ALERT_HANDSHAKE_FAILURE] sslv3 alert handshake failure") == ""
