"""The practice site as an aiohttp.web application: a quotes.toscrape.com-like site that
the Scrapy corpus (tests/scrapy_corpus) crawls, every page rendered from one data set.

=================================  ===================================================
``/``, ``/page/N/``                 10 quotes a page, a "Next" link while there are more
``/tag/T/``, ``/tag/T/page/N/``     the quotes with tag T, paginated the same way
``/author/SLUG/[?lang=fr]``         an author's page (born, where, description)
``/quote/N/``                       one quote, linked from the sitemaps and the feeds
``/login``, ``/logout``             a form with a CSRF token and a session cookie; when
                                    logged in, pages say "Logout" and link Goodreads
``/search.aspx``, ``/filter.aspx``  author, then tag, then results, with ``__VIEWSTATE``
``/api/quotes?page=N[&tag=T]``      the JSON scroll API (``has_next``)
``/api/search``                     POST a JSON body ``{"tag": T, "page": N}``
``/robots.txt``                     ``Disallow: /private/`` and a ``Sitemap:`` line
``/sitemap.xml``                    a sitemap index of gzipped sitemaps
``/feeds/quotes.xml``               RSS, authors as ``dc:creator``
``/feeds/quotes.csv``               CSV with a header; ``/feeds/authors.csv``: ``;``, none
``/status/CODE/``                   answers with that status
``/flaky/N/``                       "busy" the first time, then quote N
``/links/``                         links to one page that is there and three that fail
=================================  ===================================================
"""

from __future__ import annotations

from collections.abc import AsyncIterator
from contextlib import asynccontextmanager

from aiohttp import web

from skitter.testing._practice import _feeds, _forms
from skitter.testing._practice._pages import (
    render_author,
    render_list,
    render_message,
    render_quote,
)
from skitter.testing._practice._state import STATE, SiteState
from skitter.testing._server import serve_app

__all__ = ["make_practice_app", "serve_practice_site"]


def _html(text: str, status: int = 200) -> web.Response:
    return web.Response(text=text, status=status, content_type="text/html", charset="utf-8")


def _number(request: web.Request, key: str = "page") -> int:
    try:
        return int(request.match_info.get(key, "1"))
    except ValueError:
        raise web.HTTPNotFound() from None


async def home(request: web.Request) -> web.Response:
    state = request.app[STATE]
    data, number = state.data, _number(request)
    if not 1 <= number <= data.page_count:
        return _html(render_message("No quotes found!"), 404)
    page = render_list(
        data, data.page(number), number, data.page_count, logged_in=state.logged_in(request)
    )
    return _html(page)


async def tag(request: web.Request) -> web.Response:
    state = request.app[STATE]
    data, name, number = state.data, request.match_info["tag"], _number(request)
    count = data.tag_page_count(name)
    if name not in data.tags or not 1 <= number <= count:
        return _html(render_message("No quotes found!"), 404)
    quotes = data.tag_page(name, number)
    page = render_list(data, quotes, number, count, tag=name, logged_in=state.logged_in(request))
    return _html(page)


async def author(request: web.Request) -> web.Response:
    state = request.app[STATE]
    found = state.data.author(request.match_info["slug"])
    if found is None:
        return _html(render_message("No such author."), 404)
    lang = "fr" if request.query.get("lang") == "fr" else "en"
    return _html(render_author(found, logged_in=state.logged_in(request), lang=lang))


async def quote(request: web.Request) -> web.Response:
    state = request.app[STATE]
    found = state.data.quote(_number(request, "id"))
    if found is None:
        return _html(render_message("No such quote."), 404)
    return _html(render_quote(found, logged_in=state.logged_in(request)))


async def status(request: web.Request) -> web.Response:
    code = _number(request, "code")
    if not 200 <= code <= 599 or 300 <= code < 400:
        raise web.HTTPNotFound()
    return _html(render_message(f"This page answers {code}."), code)


async def flaky(request: web.Request) -> web.Response:
    """Busy on the first request for each N (a 200 that holds no content, the case
    Scrapy's ``get_retry_request`` is for), quote N from then on."""
    state = request.app[STATE]
    number = _number(request, "id")
    found = state.data.quote(number)
    if found is None:
        return _html(render_message("No such quote."), 404)
    state.flaky_hits[number] += 1
    if state.flaky_hits[number] == 1:
        return _html('<html><body><p class="busy">Too busy, try again.</p></body></html>')
    return _html(render_quote(found))


#: What ``/links/`` links to: a page that is there, then pages that fail.
LINKS = ("/quote/1/", "/quote/999/", "/status/500/", "/author/Nobody/")


async def links(request: web.Request) -> web.Response:
    """Links that work and links that do not, linked from nowhere else: for errbacks."""
    items = "\n".join(f'<li><a href="{path}">{path}</a></li>' for path in LINKS)
    return _html(
        render_message("Some of these links are broken.").replace(
            "</p>", f'</p>\n<ul class="links">\n{items}\n</ul>', 1
        )
    )


async def private(request: web.Request) -> web.Response:
    return _html(render_message("Robots keep out: /private/ is disallowed by robots.txt."))


def make_practice_app() -> web.Application:
    """A fresh practice site: no session, no flaky page asked for yet."""
    app = web.Application()
    app[STATE] = SiteState()
    add = app.router.add_get
    add("/", home)
    add("/page/{page}/", home)
    add("/tag/{tag}/", tag)
    add("/tag/{tag}/page/{page}/", tag)
    add("/author/{slug}/", author)
    add("/quote/{id}/", quote)
    add("/login", _forms.login_form)
    app.router.add_post("/login", _forms.login_submit)
    add("/logout", _forms.logout)
    add("/search.aspx", _forms.search_form)
    app.router.add_post("/filter.aspx", _forms.filter_form)
    add("/api/quotes", _feeds.api_quotes)
    app.router.add_post("/api/search", _feeds.api_search)
    add("/robots.txt", _feeds.robots_txt)
    add("/sitemap.xml", _feeds.sitemap_index)
    add("/sitemaps/{name}.xml.gz", _feeds.sitemap)
    add("/feeds/quotes.xml", _feeds.quotes_rss)
    add("/feeds/quotes.csv", _feeds.quotes_csv)
    add("/feeds/authors.csv", _feeds.authors_csv)
    add("/status/{code}/", status)
    add("/flaky/{id}/", flaky)
    add("/links/", links)
    add("/private/{tail:.*}", private)
    return app


@asynccontextmanager
async def serve_practice_site(host: str = "127.0.0.1", port: int = 0) -> AsyncIterator[str]:
    """Serve a fresh practice site while the block runs; yields its base URL (no trailing
    slash). ``port=0`` picks a free port."""
    async with serve_app(make_practice_app(), host, port) as base:
        yield base
