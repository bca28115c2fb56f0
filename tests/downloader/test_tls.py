"""TLS (issue 16): DOWNLOAD_VERIFY_CERTIFICATES, DOWNLOAD_TLS_MIN/MAX_VERSION, ciphers
and client certificates, against real TLS servers on 127.0.0.1 whose certificates the
tests make (trustme for a CA and the certificates it issues; ``cryptography`` for a
truly self-signed one)."""

from __future__ import annotations

import datetime
import ipaddress
import logging
import os
import ssl
from collections.abc import AsyncIterator, Awaitable, Callable
from contextlib import AsyncExitStack
from pathlib import Path
from typing import Any

import pytest
import trustme
from aiohttp import web
from cryptography import x509
from cryptography.hazmat.primitives import hashes, serialization
from cryptography.hazmat.primitives.asymmetric import ec
from cryptography.x509.oid import NameOID

from skitter import Crawler, Request, Spider
from skitter.crawler import run_crawlers
from skitter.downloader import BrowserTransport, Downloader
from skitter.downloader.browser import browser_problem
from skitter.engine import Stats
from skitter.exceptions import ConfigError, ConnectError, RequestError, TLSCertificateError

from .conftest import HTTP_TRANSPORTS, MakeDownloader, MakeTransport, build_transport, make_context

ServeTLS = Callable[..., Awaitable[str]]


def hello_app() -> web.Application:
    async def hello(request: web.Request) -> web.Response:
        peer = request.transport.get_extra_info("peercert") if request.transport else None
        subject = dict(x[0] for x in peer["subject"]) if peer else {}
        return web.Response(
            text=f"<html><body>hello {subject.get('organizationalUnitName', 'stranger')}"
            "</body></html>",
            content_type="text/html",
        )

    app = web.Application()
    app.router.add_get("/", hello)
    return app


@pytest.fixture
async def serve_tls() -> AsyncIterator[ServeTLS]:
    """``base = await serve_tls(server_context)``: hello_app over TLS on 127.0.0.1."""
    async with AsyncExitStack() as stack:

        async def start(context: ssl.SSLContext) -> str:
            runner = web.AppRunner(hello_app(), access_log=None, shutdown_timeout=0.5)
            await runner.setup()
            stack.push_async_callback(runner.cleanup)
            site = web.TCPSite(runner, "127.0.0.1", 0, ssl_context=context)
            await site.start()
            port = runner.addresses[0][1]
            return f"https://127.0.0.1:{port}"

        yield start


@pytest.fixture(scope="module")
def ca() -> trustme.CA:
    return trustme.CA()


def server_context(ca: trustme.CA, *names: str) -> ssl.SSLContext:
    context = ssl.create_default_context(ssl.Purpose.CLIENT_AUTH)
    ca.issue_cert(*(names or ("127.0.0.1",))).configure_cert(context)
    return context


def self_signed_context() -> ssl.SSLContext:
    """A server whose certificate signs itself (no CA anywhere)."""
    key = ec.generate_private_key(ec.SECP256R1())
    name = x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, "127.0.0.1")])
    now = datetime.datetime.now(datetime.UTC)
    cert = (
        x509.CertificateBuilder()
        .subject_name(name)
        .issuer_name(name)
        .public_key(key.public_key())
        .serial_number(x509.random_serial_number())
        .not_valid_before(now - datetime.timedelta(days=1))
        .not_valid_after(now + datetime.timedelta(days=1))
        .add_extension(
            x509.SubjectAlternativeName([x509.IPAddress(ipaddress.ip_address("127.0.0.1"))]),
            critical=False,
        )
        .sign(key, hashes.SHA256())
    )
    blob = trustme.Blob(
        cert.public_bytes(serialization.Encoding.PEM)
        + key.private_bytes(
            serialization.Encoding.PEM,
            serialization.PrivateFormat.PKCS8,
            serialization.NoEncryption(),
        )
    )
    context = ssl.create_default_context(ssl.Purpose.CLIENT_AUTH)
    with blob.tempfile() as path:
        context.load_cert_chain(path)
    return context


async def fetch(
    make_transport: MakeTransport, url: str, _via: str = "aiohttp", **settings: Any
) -> Any:
    transport, stats = await make_transport(settings, _via)
    try:
        return await transport.fetch(Request(url + "/"))
    except RequestError as exc:
        exc.stats = stats.values  # type: ignore[attr-defined]
        raise


# -- verification ------------------------------------------------------------------------
async def test_a_self_signed_site_is_downloaded_by_default(
    serve_tls: ServeTLS, make_transport: MakeTransport
) -> None:
    base = await serve_tls(self_signed_context())
    response = await fetch(make_transport, base)
    assert response.status == 200
    assert b"hello stranger" in response.body


async def test_verification_refuses_a_self_signed_certificate_naming_the_problem(
    serve_tls: ServeTLS, make_transport: MakeTransport
) -> None:
    base = await serve_tls(self_signed_context())
    with pytest.raises(TLSCertificateError) as caught:
        await fetch(make_transport, base, DOWNLOAD_VERIFY_CERTIFICATES=True)
    message = str(caught.value)
    assert "certificate verify failed: self-signed certificate" in message
    assert "DOWNLOAD_VERIFY_CERTIFICATES" in message
    stats = caught.value.stats  # type: ignore[attr-defined]
    assert stats["downloader/exception_type_count/TLSCertificateError"] == 1


async def test_verification_refuses_a_chain_the_client_does_not_trust(
    ca: trustme.CA, serve_tls: ServeTLS, make_transport: MakeTransport
) -> None:
    base = await serve_tls(server_context(ca))
    with pytest.raises(TLSCertificateError, match="unable to get local issuer certificate"):
        await fetch(make_transport, base, DOWNLOAD_VERIFY_CERTIFICATES=True)
    response = await fetch(make_transport, base)  # off: the same site downloads
    assert response.status == 200


async def test_verification_accepts_a_trusted_chain_and_checks_the_host_name(
    ca: trustme.CA,
    serve_tls: ServeTLS,
    make_transport: MakeTransport,
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    bundle = tmp_path / "ca.pem"
    ca.cert_pem.write_to_path(str(bundle))
    monkeypatch.setenv("SSL_CERT_FILE", str(bundle))  # OpenSSL's own trust-store switch
    good = await serve_tls(server_context(ca, "127.0.0.1"))
    response = await fetch(make_transport, good, DOWNLOAD_VERIFY_CERTIFICATES=True)
    assert response.status == 200
    other = await serve_tls(server_context(ca, "example.org"))
    with pytest.raises(TLSCertificateError, match=r"certificate verify failed: .*mismatch"):
        await fetch(make_transport, other, DOWNLOAD_VERIFY_CERTIFICATES=True)


async def test_a_certificate_failure_is_not_retried_and_is_the_tasks_reason(
    serve_tls: ServeTLS, caplog: pytest.LogCaptureFixture
) -> None:
    base = await serve_tls(self_signed_context())

    class Strict(Spider):
        name = "strict"
        start_urls = (base + "/",)

        def parse(self, response: Any) -> Any:
            yield {"ok": True}

    strict = Crawler(Strict, {"DOWNLOAD_VERIFY_CERTIFICATES": True})
    with caplog.at_level(logging.WARNING):
        await run_crawlers([strict], raise_on_failure=False)
    stats = strict.stats.to_dict()
    assert stats.get("item_scraped_count", 0) == 0
    assert stats["downloader/exception_type_count/TLSCertificateError"] == 1  # no retry
    assert stats["downloader/request_count"] == 1
    assert "certificate verify failed: self-signed certificate" in caplog.text

    stats = await Crawler(Strict).run()
    assert stats["item_scraped_count"] == 1  # Scrapy's default: crawled anyway


# -- versions and ciphers ------------------------------------------------------------------
async def test_a_minimum_version_above_the_servers_is_refused(
    ca: trustme.CA, serve_tls: ServeTLS, make_transport: MakeTransport
) -> None:
    context = server_context(ca)
    context.maximum_version = ssl.TLSVersion.TLSv1_2
    base = await serve_tls(context)
    with pytest.raises(ConnectError, match="TLS handshake failed"):
        await fetch(make_transport, base, DOWNLOAD_TLS_MIN_VERSION="TLSv1.3")
    response = await fetch(make_transport, base, DOWNLOAD_TLS_MIN_VERSION="TLSv1.2")
    assert response.status == 200


async def test_a_maximum_version_below_the_servers_is_refused(
    ca: trustme.CA, serve_tls: ServeTLS, make_transport: MakeTransport
) -> None:
    context = server_context(ca)
    context.minimum_version = ssl.TLSVersion.TLSv1_3
    base = await serve_tls(context)
    with pytest.raises(ConnectError, match="TLS handshake failed"):
        await fetch(make_transport, base, DOWNLOAD_TLS_MAX_VERSION="TLSv1.2")
    response = await fetch(make_transport, base, DOWNLOAD_TLS_MAX_VERSION="TLSv1.3")
    assert response.status == 200


@pytest.mark.parametrize(
    ("settings", "message"),
    [
        ({"DOWNLOAD_TLS_MIN_VERSION": "TLSv1.4"}, "DOWNLOAD_TLS_MIN_VERSION must be one of"),
        ({"DOWNLOAD_TLS_MAX_VERSION": "SSLv3"}, "DOWNLOAD_TLS_MAX_VERSION must be one of"),
        (
            {"DOWNLOAD_TLS_MIN_VERSION": "TLSv1.3", "DOWNLOAD_TLS_MAX_VERSION": "TLSv1.2"},
            "no version is left",
        ),
        ({"DOWNLOADER_CLIENT_TLS_CIPHERS": "NO-SUCH-CIPHER"}, "DOWNLOADER_CLIENT_TLS_CIPHERS"),
        ({"DOWNLOAD_CLIENT_CERT": "/nonexistent/cert.pem"}, "cannot load the client cert"),
        ({"DOWNLOAD_CLIENT_KEY": "/some/key.pem"}, "DOWNLOAD_CLIENT_CERT is not"),
    ],
)
async def test_settings_that_cannot_work_are_refused_at_start(
    settings: dict[str, Any], message: str, make_downloader: MakeDownloader
) -> None:
    with pytest.raises(ConfigError, match=message):
        await make_downloader(settings)


def test_the_crawl_has_one_context_which_the_transport_uses() -> None:
    context = make_context({"DOWNLOAD_VERIFY_CERTIFICATES": True})
    downloader = Downloader(context, None)
    assert isinstance(downloader.tls, ssl.SSLContext)
    assert downloader.tls.verify_mode == ssl.CERT_REQUIRED
    assert downloader.transport._tls is downloader.tls  # type: ignore[attr-defined]
    plain = Downloader(make_context(), None)
    assert plain.tls.verify_mode == ssl.CERT_NONE and not plain.tls.check_hostname


# -- client certificates -------------------------------------------------------------------
def client_cert_server(ca: trustme.CA) -> ssl.SSLContext:
    context = server_context(ca)
    context.verify_mode = ssl.CERT_REQUIRED
    ca.configure_trust(context)
    return context


@pytest.mark.parametrize("via", HTTP_TRANSPORTS)
async def test_a_server_that_requires_a_client_certificate_gets_it(
    via: str, ca: trustme.CA, serve_tls: ServeTLS, make_transport: MakeTransport, tmp_path: Path
) -> None:
    base = await serve_tls(client_cert_server(ca))
    with pytest.raises(RequestError):  # the server ends the handshake (or the connection)
        await fetch(make_transport, base, via)
    client = ca.issue_cert("crawler@example.org", organization_unit_name="crawler-one")
    cert, key = tmp_path / "client.pem", tmp_path / "client.key"
    for blob in client.cert_chain_pems:
        with cert.open("ab") as out:
            out.write(blob.bytes())
    client.private_key_pem.write_to_path(str(key))
    response = await fetch(
        make_transport, base, via, DOWNLOAD_CLIENT_CERT=str(cert), DOWNLOAD_CLIENT_KEY=str(key)
    )
    assert b"hello crawler-one" in response.body
    both = tmp_path / "both.pem"
    client.private_key_and_cert_chain_pem.write_to_path(str(both))
    response = await fetch(make_transport, base, via, DOWNLOAD_CLIENT_CERT=str(both))
    assert b"hello crawler-one" in response.body


@pytest.mark.parametrize("via", HTTP_TRANSPORTS)
def test_an_encrypted_client_key_needs_its_password(
    via: str, ca: trustme.CA, tmp_path: Path
) -> None:
    client = ca.issue_cert("crawler@example.org")
    key = serialization.load_pem_private_key(client.private_key_pem.bytes(), None)
    locked = tmp_path / "locked.key"
    locked.write_bytes(
        key.private_bytes(
            serialization.Encoding.PEM,
            serialization.PrivateFormat.PKCS8,
            serialization.BestAvailableEncryption(b"s3cret-pa55"),
        )
    )
    cert = tmp_path / "client.pem"
    client.cert_chain_pems[0].write_to_path(str(cert))
    settings = {"DOWNLOAD_CLIENT_CERT": str(cert), "DOWNLOAD_CLIENT_KEY": str(locked)}
    with pytest.raises(ConfigError, match="set DOWNLOAD_CLIENT_KEY_PASSWORD"):
        build_transport(via, make_context(settings).settings, make_context().stats)
    wrong = {**settings, "DOWNLOAD_CLIENT_KEY_PASSWORD": "wrong"}
    with pytest.raises(ConfigError, match="cannot load") as caught:
        build_transport(via, make_context(wrong).settings, make_context().stats)
    assert "wrong" not in str(caught.value)
    right = {**settings, "DOWNLOAD_CLIENT_KEY_PASSWORD": "s3cret-pa55"}
    build_transport(via, make_context(right).settings, make_context().stats)


# -- rendered pages ------------------------------------------------------------------------------
async def test_rendered_pages_follow_the_verification_switch(
    serve_tls: ServeTLS, caplog: pytest.LogCaptureFixture
) -> None:
    problem = browser_problem()
    if problem is not None:  # as tests/downloader/browser does: skipped here, a failure under CI
        message = f"browser tests need Chromium and Playwright: {problem}"
        if os.environ.get("CI", "").lower() == "true":
            pytest.fail(message)
        pytest.skip(message)
    base = await serve_tls(self_signed_context())
    for settings, works in (
        ({}, True),
        ({"DOWNLOAD_VERIFY_CERTIFICATES": True, "DOWNLOAD_TLS_MIN_VERSION": "TLSv1.2"}, False),
    ):
        browser = BrowserTransport(make_context(settings).settings, Stats())
        await browser.open()
        try:
            if works:
                response = await browser.fetch(Request(base + "/", render=True))
                assert "hello stranger" in response.text
            else:
                with caplog.at_level(logging.WARNING), pytest.raises(RequestError, match="CERT"):
                    await browser.fetch(Request(base + "/", render=True))
        finally:
            await browser.close()
    assert "rendered pages do not use DOWNLOAD_TLS_MIN_VERSION" in caplog.text
