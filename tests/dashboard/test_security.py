"""Who may read and change the crawl: CSRF tokens, origins, hosts, login tokens."""

from __future__ import annotations

import asyncio
import ssl
import subprocess
from pathlib import Path
from typing import Any

import aiohttp
import pytest
from aiohttp import web

from skitter import ConfigError, Crawler
from skitter.dashboard import Dashboard
from skitter.dashboard._security import Guard

from .conftest import running_crawl, tree_spider

TOKEN = "correct-horse-battery-staple"


@pytest.mark.parametrize("host", ["0.0.0.0", "::", "", "192.0.2.10", "example.com"])
def test_listening_beyond_loopback_needs_a_token(host: str) -> None:
    crawler = Crawler(tree_spider("exposed"))
    with pytest.raises(ConfigError, match="without a token: pass --ui-token"):
        Dashboard([crawler.control], host=host)
    Dashboard([crawler.control], host=host, token=TOKEN)  # accepted with one


@pytest.mark.parametrize("host", ["127.0.0.1", "localhost", "::1", "127.0.0.2"])
def test_loopback_needs_no_token(host: str) -> None:
    Dashboard([Crawler(tree_spider("local")).control], host=host)


def test_a_short_token_is_refused() -> None:
    with pytest.raises(ConfigError, match="at least 16 characters"):
        Dashboard([Crawler(tree_spider("short")).control], token="hunter2")


async def test_a_busy_port_is_a_clear_error() -> None:
    crawler = Crawler(tree_spider("busy"))
    async with Dashboard([crawler.control]) as first:
        port = int(first.url.rsplit(":", 1)[1].strip("/"))
        with pytest.raises(ConfigError, match=f"cannot listen on 127.0.0.1:{port}"):
            await Dashboard([crawler.control], port=port).start()


async def test_state_changes_need_the_csrf_header(serve: Any) -> None:
    async with running_crawl(serve, [tree_spider("csrf")]) as run:
        pause = run.url + "api/projects/csrf/pause"
        async with run.http.post(pause, json={}) as resp:
            assert resp.status == 403
            assert "X-Skitter-CSRF" in (await resp.json())["error"]
        async with run.http.post(pause, json={}, headers={"X-Skitter-CSRF": "x.y"}) as resp:
            assert resp.status == 403
        assert run.crawler.control.status == "running"
        # The page carries a token in a meta tag; it works like the one from /api/session.
        async with run.http.get(run.url) as resp:
            page = await resp.text()
        token = page.split('name="skitter-csrf" content="', 1)[1].split('"', 1)[0]
        async with run.http.post(pause, json={}, headers={"X-Skitter-CSRF": token}) as resp:
            assert resp.status == 200
        assert run.crawler.control.status == "paused"


async def test_cross_origin_posts_are_refused_even_with_a_token(serve: Any) -> None:
    async with running_crawl(serve, [tree_spider("origin")]) as run:
        csrf = await run.csrf()
        for headers in (
            {"Origin": "http://evil.example"},
            {"Origin": "null"},
            {"Sec-Fetch-Site": "cross-site"},
        ):
            status, body = await run.post("api/projects/origin/pause", {}, headers=headers)
            assert status == 403, headers
            assert "refused" in body["error"]
        same = run.url.rstrip("/")
        status, _ = await run.post(
            "api/projects/origin/pause", {}, headers={"Origin": same, "X-Skitter-CSRF": csrf}
        )
        assert status == 200


async def test_a_foreign_host_header_is_refused_without_a_login_token(serve: Any) -> None:
    """DNS rebinding: attacker.example resolving to 127.0.0.1 must get nothing."""
    async with running_crawl(serve, [tree_spider("rebind")]) as run:
        async with run.http.get(
            run.url + "api/projects", headers={"Host": "attacker.example"}
        ) as resp:
            assert resp.status == 403
        async with run.http.get(run.url + "api/projects", headers={"Host": "localhost"}) as resp:
            assert resp.status == 200


async def test_with_a_token_every_request_needs_it(serve: Any) -> None:
    async with running_crawl(serve, [tree_spider("locked")], token=TOKEN) as run:
        url = run.url
        for path in ("api/projects", "api/overview", "metrics", "api/session"):
            async with run.http.get(url + path) as resp:
                assert resp.status == 401, path
                assert resp.headers["WWW-Authenticate"].startswith("Bearer")
        async with run.http.get(url, allow_redirects=False) as resp:
            assert (resp.status, resp.headers["Location"]) == (303, "/login")
        async with run.http.get(url + "static/dashboard.css") as resp:
            assert resp.status == 200  # public: the login page needs it
        bearer = {"Authorization": f"Bearer {TOKEN}"}
        async with run.http.get(url + "api/projects", headers=bearer) as resp:
            assert resp.status == 200
        async with run.http.get(
            url + "api/projects", headers={"Authorization": "Bearer " + TOKEN[:-1] + "X"}
        ) as resp:
            assert resp.status == 401
        # A bearer header is never sent by a browser on its own: no CSRF token needed.
        async with run.http.post(url + "api/projects/locked/pause", headers=bearer) as resp:
            assert resp.status == 200
        assert run.crawler.control.status == "paused"


async def test_login_sets_a_session_cookie(serve: Any) -> None:
    async with running_crawl(serve, [tree_spider("login")], token=TOKEN) as run:
        url = run.url
        # unsafe=True: aiohttp's jar, unlike a browser's, ignores cookies from IP hosts.
        async with aiohttp.ClientSession(cookie_jar=aiohttp.CookieJar(unsafe=True)) as browser:
            async with browser.post(url + "login", data={"token": "wrong" * 4}) as resp:
                assert resp.status == 401
                assert "Wrong token" in await resp.text()
            async with browser.post(url + "login", data={"token": TOKEN}) as resp:
                assert resp.status == 200  # followed the redirect to the page
                assert 'name="skitter-csrf"' in await resp.text()
            async with browser.get(url + "api/projects") as resp:
                assert resp.status == 200
            # The cookie authenticates, but a state change still needs the CSRF token.
            async with browser.post(url + "api/projects/login/pause", json={}) as resp:
                assert resp.status == 403
            async with browser.get(url + "api/session") as resp:
                csrf = (await resp.json())["csrf"]
            async with browser.post(
                url + "api/projects/login/pause", json={}, headers={"X-Skitter-CSRF": csrf}
            ) as resp:
                assert resp.status == 200
        async with aiohttp.ClientSession(cookie_jar=aiohttp.CookieJar(unsafe=True)) as other:
            async with other.post(
                url + "login", data={"token": TOKEN}, allow_redirects=False
            ) as resp:
                assert resp.status == 303
                cookie = resp.cookies[run.dashboard.guard.cookie_name]
                assert cookie["httponly"] and cookie["samesite"] == "Strict"
                assert cookie["max-age"] == str(12 * 3600)  # a session, not for ever
                assert not cookie["secure"]  # served over http: a Secure cookie never returns
            async with other.get(url + "api/projects") as resp:
                assert resp.status == 200


async def test_the_token_never_logs_in_from_a_url(serve: Any) -> None:
    """A token in a URL ends up in the history, Referer headers and proxy logs."""
    jar = aiohttp.CookieJar(unsafe=True)
    async with (
        running_crawl(serve, [tree_spider("nourl")], token=TOKEN) as run,
        aiohttp.ClientSession(cookie_jar=jar) as browser,
    ):
        async with browser.get(run.url + f"login?token={TOKEN}", allow_redirects=False) as resp:
            assert resp.status == 400
            assert "not in the URL" in await resp.text()
            assert "Set-Cookie" not in resp.headers
        async with browser.get(run.url + "api/projects") as resp:
            assert resp.status == 401


async def test_a_session_ends_after_its_time_whatever_the_browser_keeps() -> None:
    now = [1_000_000.0]
    guard = Guard(TOKEN, session_seconds=60, clock=lambda: now[0])
    session = guard.issue_session()
    assert guard._valid_session(session)
    now[0] += 59
    assert guard._valid_session(session)
    now[0] += 1
    assert not guard._valid_session(session)  # the cookie may live on; the login does not
    # a CSRF token is no session, and a forged time is caught by the signature
    assert not guard._valid_session(guard.issue_csrf())
    nonce, _issued, mac = session.split(".")
    assert not guard._valid_session(f"{nonce}.{int(now[0])}.{mac}")


async def raw_request(url: str, *lines: bytes, body: bytes = b"") -> int:
    """Send a request byte for byte (aiohttp's client will not send non-ASCII headers);
    the response's status."""
    host, port = url.split("//", 1)[1].strip("/").rsplit(":", 1)
    reader, writer = await asyncio.open_connection(host, int(port))
    try:
        head = [*lines, b"Connection: close", b"Content-Length: %d" % len(body)]
        writer.write(b"\r\n".join([*head, b"", body]))
        await writer.drain()
        status_line = await reader.readline()
    finally:
        writer.close()
        await writer.wait_closed()
    return int(status_line.split()[1])


@pytest.mark.parametrize("token", [None, TOKEN])
async def test_garbage_in_a_cookie_or_header_is_refused_never_a_server_error(
    serve: Any, token: str | None
) -> None:
    async with running_crawl(serve, [tree_spider("garbage")], token=token) as run:
        cookie = run.dashboard.guard.cookie_name.encode()
        get, post = b"GET /api/projects HTTP/1.1", b"POST /api/projects/garbage/pause HTTP/1.1"
        host = b"Host: 127.0.0.1"
        form = b"Content-Type: application/x-www-form-urlencoded"
        cases = {
            "utf-8 cookie": (get, host, b"Cookie: " + cookie + "=é.é".encode()),
            "latin-1 cookie": (get, host, b"Cookie: " + cookie + b"=\xe9.\xe9"),
            "utf-8 csrf": (post, host, "X-Skitter-CSRF: é.é".encode()),
            "latin-1 csrf": (post, host, b"X-Skitter-CSRF: \xe9.\xe9"),
            "utf-8 bearer": (get, host, "Authorization: Bearer é".encode()),
            "latin-1 bearer": (get, host, b"Authorization: Bearer \xe9\xff"),
            "latin-1 origin": (post, host, b"Origin: http://\xe9"),
            "latin-1 host": (get, b"Host: \xe9.example"),
            "latin-1 login": (b"POST /login HTTP/1.1", host, form),
        }  # fmt: skip
        for name, lines in cases.items():
            body = b"token=%E9%FF" if name.endswith("login") else b""
            status = await raw_request(run.url, *lines, body=body)
            allowed = {401, 403} if token is not None else {200, 403}
            if name.endswith("login"):
                allowed = {401} if token is not None else {303}
            assert status in allowed, (name, status)


async def test_pages_carry_a_content_security_policy(serve: Any) -> None:
    async with running_crawl(serve, [tree_spider("csp")]) as run:
        for path in ("", "static/dashboard.js", "api/projects", "nope"):
            async with run.http.get(run.url + path) as resp:
                csp = resp.headers["Content-Security-Policy"]
                assert "script-src 'self'" in csp and "unsafe-inline" not in csp, path
                assert resp.headers["X-Content-Type-Options"] == "nosniff"
        for path in ("static/..%2f_server.py", "static/index.html", "static/nope.js"):
            async with run.http.get(run.url + path) as resp:
                assert resp.status == 404, path


async def test_bad_bodies_are_clear_errors(serve: Any) -> None:
    async with running_crawl(serve, [tree_spider("bodies")]) as run:
        headers = {"X-Skitter-CSRF": await run.csrf()}
        rate = run.url + "api/projects/bodies/rate"
        cases = [
            ({"data": b"{not json", "headers": {"Content-Type": "application/json"}}, 400),
            ({"data": b"rate=1", "headers": {"Content-Type": "text/plain"}}, 400),
            ({"data": b"[" * 20_000, "headers": {"Content-Type": "application/json"}}, 413),
        ]
        for kwargs, expected in cases:
            merged = {**headers, **kwargs.pop("headers")}
            async with run.http.post(rate, headers=merged, **kwargs) as resp:
                assert resp.status == expected
                if expected == 400:
                    assert (await resp.json())["error"]


@pytest.fixture
def tls(tmp_path: Path) -> ssl.SSLContext:
    """A server context with a self-signed certificate for 127.0.0.1."""
    key, cert = tmp_path / "key.pem", tmp_path / "cert.pem"
    subprocess.run(
        ["openssl", "req", "-x509", "-newkey", "rsa:2048", "-nodes", "-days", "1",
         "-keyout", str(key), "-out", str(cert), "-subj", "/CN=127.0.0.1"],
        check=True, capture_output=True,
    )  # fmt: skip
    context = ssl.create_default_context(ssl.Purpose.CLIENT_AUTH)
    context.load_cert_chain(cert, key)
    return context


async def test_over_https_the_session_cookie_is_secure(tls: ssl.SSLContext) -> None:
    dashboard = Dashboard([Crawler(tree_spider("tls")).control], token=TOKEN)
    runner = web.AppRunner(dashboard.make_app())
    await runner.setup()
    try:
        site = web.TCPSite(runner, "127.0.0.1", 0, ssl_context=tls)
        await site.start()
        port = runner.addresses[0][1]
        async with (
            aiohttp.ClientSession() as http,
            http.post(
                f"https://127.0.0.1:{port}/login",
                data={"token": TOKEN},
                allow_redirects=False,
                ssl=False,  # our own self-signed certificate
            ) as resp,
        ):
            assert resp.status == 303
            cookie = resp.cookies[dashboard.guard.cookie_name]
            assert cookie["secure"] and cookie["httponly"]
    finally:
        await runner.cleanup()
