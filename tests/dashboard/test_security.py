"""Who may read and change the crawl: CSRF tokens, origins, hosts, login tokens."""

from __future__ import annotations

from typing import Any

import aiohttp
import pytest

from skitter import ConfigError, Crawler
from skitter.dashboard import Dashboard

from .conftest import running_crawl, tree_spider

TOKEN = "correct-horse-battery-staple"


@pytest.mark.parametrize("host", ["0.0.0.0", "::", "", "192.0.2.10", "example.com"])
def test_listening_beyond_loopback_needs_a_token(host: str) -> None:
    crawler = Crawler(tree_spider("exposed"))
    with pytest.raises(ConfigError, match="without a token: pass --ui-token"):
        Dashboard([crawler], host=host)
    Dashboard([crawler], host=host, token=TOKEN)  # accepted with one


@pytest.mark.parametrize("host", ["127.0.0.1", "localhost", "::1", "127.0.0.2"])
def test_loopback_needs_no_token(host: str) -> None:
    Dashboard([Crawler(tree_spider("local"))], host=host)


def test_a_short_token_is_refused() -> None:
    with pytest.raises(ConfigError, match="at least 16 characters"):
        Dashboard([Crawler(tree_spider("short"))], token="hunter2")


async def test_a_busy_port_is_a_clear_error() -> None:
    crawler = Crawler(tree_spider("busy"))
    async with Dashboard([crawler]) as first:
        port = int(first.url.rsplit(":", 1)[1].strip("/"))
        with pytest.raises(ConfigError, match=f"cannot listen on 127.0.0.1:{port}"):
            await Dashboard([crawler], port=port).start()


async def test_state_changes_need_the_csrf_header(serve: Any) -> None:
    async with running_crawl(serve, [tree_spider("csrf")]) as run:
        pause = run.url + "api/projects/csrf/pause"
        async with run.http.post(pause, json={}) as resp:
            assert resp.status == 403
            assert "X-Skitter-CSRF" in (await resp.json())["error"]
        async with run.http.post(pause, json={}, headers={"X-Skitter-CSRF": "x.y"}) as resp:
            assert resp.status == 403
        assert run.crawler.status == "running"
        # The page carries a token in a meta tag; it works like the one from /api/session.
        async with run.http.get(run.url) as resp:
            page = await resp.text()
        token = page.split('name="skitter-csrf" content="', 1)[1].split('"', 1)[0]
        async with run.http.post(pause, json={}, headers={"X-Skitter-CSRF": token}) as resp:
            assert resp.status == 200
        assert run.crawler.status == "paused"


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
        assert run.crawler.status == "paused"


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
            async with other.get(url + f"login?token={TOKEN}", allow_redirects=False) as resp:
                assert resp.status == 303
                cookie = resp.cookies[run.dashboard.guard.cookie_name]
                assert cookie["httponly"] and cookie["samesite"] == "Strict"
            async with other.get(url + "api/projects") as resp:
                assert resp.status == 200


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
