"""The practice site is strict where the corpus relies on it: a login without the session
cookie or the CSRF token, or a search without its round-tripped ViewState, gets an error,
never the content. Otherwise a form library that dropped a hidden field would pass."""

from __future__ import annotations

import gzip
import re
from collections.abc import AsyncIterator

import aiohttp
import pytest

from skitter.testing._practice import practice_data, serve_practice_site

_TOKEN = re.compile(r'name="csrf_token" value="([^"]+)"')
_VIEWSTATE = re.compile(r'name="__VIEWSTATE" value="([^"]+)"')
Site = tuple[str, aiohttp.ClientSession]


@pytest.fixture
async def site() -> AsyncIterator[Site]:
    jar = aiohttp.CookieJar(unsafe=True)  # keep cookies for an IP address
    async with serve_practice_site() as base, aiohttp.ClientSession(cookie_jar=jar) as session:
        yield base, session


def _tampered(viewstate: str) -> str:
    """The ViewState with the last character of its MAC changed (always changed)."""
    return viewstate[:-1] + ("1" if viewstate.endswith("0") else "0")


async def _token(session: aiohttp.ClientSession, base: str) -> str:
    async with session.get(f"{base}/login") as response:
        match = _TOKEN.search(await response.text())
    assert match is not None
    return match.group(1)


async def test_a_login_with_cookie_and_token_shows_logout_and_goodreads(site: Site) -> None:
    base, session = site
    token = await _token(session, base)
    form = {"csrf_token": token, "username": "u", "password": "p"}
    async with session.post(f"{base}/login", data=form) as response:
        page = await response.text()
    assert str(response.url) == f"{base}/"
    assert 'href="/logout"' in page and "goodreads.com" in page
    async with session.get(f"{base}/logout") as response:
        assert 'href="/login"' in await response.text()


@pytest.mark.parametrize("token", ["", "forged"])
async def test_a_login_without_the_right_token_is_refused(site: Site, token: str) -> None:
    base, session = site
    await _token(session, base)
    form = {"csrf_token": token, "username": "u", "password": "p"}
    async with session.post(f"{base}/login", data=form) as response:
        assert response.status == 403
        assert "Invalid CSRF token" in await response.text()
    async with session.get(f"{base}/") as response:
        assert 'href="/logout"' not in await response.text()


async def test_a_login_without_the_session_cookie_is_refused(site: Site) -> None:
    base, session = site
    token = await _token(session, base)
    async with aiohttp.ClientSession(cookie_jar=aiohttp.DummyCookieJar()) as cookieless:
        form = {"csrf_token": token, "username": "u", "password": "p"}
        async with cookieless.post(f"{base}/login", data=form) as response:
            assert response.status == 403
            assert "No session" in await response.text()


async def test_the_search_needs_each_step_s_viewstate(site: Site) -> None:
    base, session = site
    data = practice_data()
    author = data.authors[0]
    tag = data.tags_of(author)[0]
    async with session.get(f"{base}/search.aspx") as response:
        first = _VIEWSTATE.search(await response.text())
    assert first is not None
    step1 = {"author": author.name, "__VIEWSTATE": first.group(1)}
    async with session.post(f"{base}/filter.aspx", data=step1) as response:
        second = _VIEWSTATE.search(await response.text())
    assert second is not None
    good = {
        "author": author.name,
        "tag": tag,
        "__VIEWSTATE": second.group(1),
        "submit_button": "Search",
    }
    async with session.post(f"{base}/filter.aspx", data=good) as response:
        assert response.status == 200
        assert author.name in await response.text()
    other = data.authors[1].name
    for bad in (
        {**good, "__VIEWSTATE": ""},
        {**good, "__VIEWSTATE": _tampered(second.group(1))},
        {**good, "__VIEWSTATE": first.group(1)},  # step 1's: a search for no author yet
        {**good, "author": other},  # step 2's ViewState is for another author
        {**good, "submit_button": ""},  # the menu changed, the button was not pressed
    ):
        async with session.post(f"{base}/filter.aspx", data=bad) as response:
            if bad["__VIEWSTATE"] == first.group(1):
                # step 1's ViewState asks for the tag menu again, never for results
                assert 'class="results"' not in await response.text()
            else:
                assert response.status == 400, bad


async def test_the_sitemaps_are_gzip_files_listed_by_robots_txt(site: Site) -> None:
    base, session = site
    async with session.get(f"{base}/robots.txt") as response:
        assert f"Sitemap: {base}/sitemap.xml" in await response.text()
    async with session.get(f"{base}/sitemaps/quotes.xml.gz") as response:
        assert "Content-Encoding" not in response.headers
        text = gzip.decompress(await response.read()).decode()
    assert text.count("<loc>") == len(practice_data().quotes)


async def test_the_search_api_answers_json_requests_only(site: Site) -> None:
    base, session = site
    async with session.post(f"{base}/api/search", data={"tag": "love"}) as response:
        assert response.status == 415
    async with session.post(f"{base}/api/search", json={"tag": "love", "page": 2}) as response:
        answer = await response.json()
    assert [q["text"] for q in answer["quotes"]] == [
        q.shown for q in practice_data().tag_page("love", 2)
    ]
