"""The practice site's forms: a login guarded by a session cookie and a CSRF token, and an
ASP.NET-style search whose every step carries a signed ``__VIEWSTATE``.

Both are strict on purpose: a spider that drops the cookie, the token or the ViewState,
or sends the wrong one, gets an error page, never the content, so a form library that
forgets a hidden field is caught.
"""

from __future__ import annotations

import secrets
from html import escape

from aiohttp import web

from skitter.testing._practice._data import Author
from skitter.testing._practice._pages import render_login, render_message
from skitter.testing._practice._state import SESSION_COOKIE, STATE

__all__ = ["filter_form", "login_form", "login_submit", "logout", "search_form"]


def _html(text: str, status: int = 200) -> web.Response:
    return web.Response(text=text, status=status, content_type="text/html", charset="utf-8")


async def login_form(request: web.Request) -> web.Response:
    state = request.app[STATE]
    session = state.session(request)
    sid = request.cookies.get(SESSION_COOKIE, "")
    if session is None:
        sid, session = state.new_session()
    session.csrf_token = secrets.token_urlsafe(24)  # a fresh token for every form shown
    response = _html(render_login(session.csrf_token))
    response.set_cookie(SESSION_COOKIE, sid, httponly=True, path="/")
    return response


async def login_submit(request: web.Request) -> web.Response:
    state = request.app[STATE]
    session = state.session(request)
    form = await request.post()
    if session is None:
        return _html(render_message("No session: log in with cookies enabled."), 403)
    token = form.get("csrf_token")
    if not isinstance(token, str) or not token or token != session.csrf_token:
        return _html(render_message("Invalid CSRF token."), 403)
    username, password = form.get("username"), form.get("password")
    if not (isinstance(username, str) and username and isinstance(password, str) and password):
        session.csrf_token = secrets.token_urlsafe(24)
        error = "Error while logging in: give a username and a password."
        return _html(render_login(session.csrf_token, error=error))
    session.user = username
    session.csrf_token = ""  # used once
    raise web.HTTPFound("/")


async def logout(request: web.Request) -> web.Response:
    session = request.app[STATE].session(request)
    if session is not None:
        session.user = None
    raise web.HTTPFound("/")


def _options(values: list[str], selected: str | None = None) -> str:
    rows = ['<option value="">----------</option>']
    for value in values:
        mark = " selected" if value == selected else ""
        rows.append(f'<option value="{escape(value)}"{mark}>{escape(value)}</option>')
    return "\n".join(rows)


def _search_page(authors: list[str], tags: list[str], viewstate: str, author: str | None) -> str:
    return (
        "<!DOCTYPE html>\n<html><head><title>Search | Quotes</title></head><body>\n"
        '<form action="/filter.aspx" method="post" id="search">\n'
        f'<select name="author" id="author">\n{_options(authors, author)}\n</select>\n'
        f'<select name="tag" id="tag">\n{_options(tags)}\n</select>\n'
        f'<input type="hidden" name="__VIEWSTATE" value="{escape(viewstate)}">\n'
        '<input type="submit" name="submit_button" value="Search">\n'
        "</form>\n</body></html>\n"
    )


async def search_form(request: web.Request) -> web.Response:
    state = request.app[STATE]
    authors = [a.name for a in state.data.authors]
    return _html(_search_page(authors, [], state.sign({"step": "author"}), None))


def _results(author: Author, tag: str, quotes: list[str]) -> str:
    rows = "\n".join(
        f'<div class="quote"><span class="content">{escape(text, quote=False)}</span>\n'
        f'<span class="author">{escape(author.name)}</span>\n'
        f'<span class="tag">{escape(tag)}</span></div>'
        for text in quotes
    )
    return (
        "<!DOCTYPE html>\n<html><head><title>Results | Quotes</title></head><body>\n"
        f'<div class="results">\n{rows}\n</div>\n</body></html>\n'
    )


async def filter_form(request: web.Request) -> web.Response:
    """Step 1 (a ViewState for the author menu, posted when the menu changes, with or
    without the button): the author's tags. Step 2 (the ViewState step 1 gave, for the
    same author, and the Search button): the quotes with that tag."""
    state = request.app[STATE]
    form = await request.post()
    viewstate = form.get("__VIEWSTATE")
    saved = state.verify(viewstate) if isinstance(viewstate, str) else None
    if saved is None:
        return _html(render_message("Invalid ViewState: the form was not sent back whole."), 400)
    name = form.get("author")
    author = state.data.author_named(name) if isinstance(name, str) else None
    if author is None:
        return _html(render_message("Choose an author."), 400)
    tags = list(state.data.tags_of(author))
    if saved.get("step") == "author":
        names = [a.name for a in state.data.authors]
        signed = state.sign({"step": "tag", "author": author.name})
        return _html(_search_page(names, tags, signed, author.name))
    if saved.get("step") != "tag" or saved.get("author") != author.name:
        return _html(render_message("Invalid ViewState: it belongs to another search."), 400)
    tag = form.get("tag")
    if not isinstance(tag, str) or tag not in tags:
        return _html(render_message("Choose a tag."), 400)
    if form.get("submit_button") != "Search":  # results come from the button, not a menu
        return _html(render_message("Press Search for the results."), 400)
    texts = [q.shown for q in state.data.by(author) if tag in q.tags]
    return _html(_results(author, tag, texts))
