"""Spiders written the Scrapy way, against a local practice site: a login form with a
CSRF token, an ASP.NET-style search form that carries its __VIEWSTATE from page to
page, and a JSON scroll API. Each crawl runs with the memory frontier and with a job
directory (the SQLite frontier), where every request is stored and read back: a
FormRequest or JsonRequest must come back as one, with its body."""

from __future__ import annotations

import base64
import json
import secrets
from pathlib import Path
from typing import Any

import pytest
from aiohttp import web

from skitter import Crawler, FormRequest, Spider
from skitter.http import HtmlResponse, JsonRequest, JsonResponse, Response

FAST = {"RETRY_TIMES": 0, "CONCURRENT_REQUESTS": 4}

QUOTES = {
    ("Albert Einstein", "change"): [
        "The world as we have created it is a process of our thinking."
    ],
    ("Albert Einstein", "thinking"): ["We cannot solve our problems with the same thinking."],
    ("Jane Austen", "love"): [
        "There is nothing I would not do for those who are really my friends."
    ],
}
ASPNET_FIXED = {"__VIEWSTATEGENERATOR": "CA0B0334", "__EVENTTARGET": "", "__EVENTARGUMENT": ""}


def html(body: str, status: int = 200) -> web.Response:
    return web.Response(
        text=f"<html><head><title>practice</title></head><body>{body}</body></html>",
        status=status,
        content_type="text/html",
    )


def refuse(reason: str) -> web.Response:
    return html(f"<p class='error'>{reason}</p>", status=400)


def options(values: list[str], selected: str | None = None) -> str:
    return "".join(
        f'<option value="{v}"{" selected" if v == selected else ""}>{v}</option>'
        for v in ["----------", *values]
    )


def viewstate(state: dict[str, Any]) -> str:
    return base64.b64encode(json.dumps(state, sort_keys=True).encode()).decode()


class PracticeSite:
    """The server side checks exactly what a browser would send, and nothing more."""

    def __init__(self) -> None:
        self.tokens: dict[str, str] = {}  # session cookie -> CSRF token
        self.refused: list[str] = []
        self.app = web.Application()
        self.app.router.add_get("/login", self.login_page)
        self.app.router.add_post("/login", self.login)
        self.app.router.add_get("/account", self.account)
        self.app.router.add_get("/search.aspx", self.search_page)
        self.app.router.add_post("/filter.aspx", self.filter)
        self.app.router.add_post("/api/quotes", self.api)

    def _refuse(self, reason: str) -> web.Response:
        self.refused.append(reason)
        return refuse(reason)

    # -- login with a CSRF token -------------------------------------------------------
    async def login_page(self, request: web.Request) -> web.Response:
        session, token = secrets.token_hex(8), secrets.token_hex(16)
        self.tokens[session] = token
        response = html(
            '<form action="/login" method="post" id="login">'
            f'<input type="hidden" name="csrf_token" value="{token}">'
            '<label>User <input type="text" name="username"></label>'
            '<label>Password <input type="password" name="password"></label>'
            '<input type="checkbox" name="remember" value="yes">'
            '<input type="text" name="otp" value="000000" disabled>'
            '<input type="submit" value="Login">'
            "</form>"
            '<form action="/search" method="get" id="site-search"><input name="q"></form>'
        )
        response.set_cookie("session", session)
        return response

    async def login(self, request: web.Request) -> web.Response:
        form = await request.post()
        session = request.cookies.get("session", "")
        if sorted(form) != ["csrf_token", "password", "username"]:
            return self._refuse(f"unexpected fields {sorted(form)}")
        if self.tokens.get(session) != form["csrf_token"]:
            return self._refuse("CSRF token does not match the session")
        if (form["username"], form["password"]) != ("alice", "s3cret"):
            return self._refuse("bad credentials")
        response = web.HTTPFound("/account")
        response.set_cookie("auth", "alice")
        raise response

    async def account(self, request: web.Request) -> web.Response:
        user = request.cookies.get("auth")
        if user is None:
            return self._refuse("not logged in")
        return html(f'<p class="user">Logged in as {user}</p><a href="/logout">Logout</a>')

    # -- an ASP.NET-style form, two postbacks ----------------------------------------------
    async def search_page(self, request: web.Request) -> web.Response:
        return self._search_form(viewstate({"step": 1}), None, [])

    def _search_form(self, state: str, author: str | None, tags: list[str]) -> web.Response:
        authors = sorted({a for a, _ in QUOTES})
        hidden = {"__VIEWSTATE": state, **ASPNET_FIXED}
        return html(
            '<form name="aspnetForm" method="post" action="filter.aspx" id="aspnetForm">'
            + "".join(f'<input type="hidden" name="{k}" value="{v}">' for k, v in hidden.items())
            + f'<select name="author" id="author">{options(authors, author)}</select>'
            + f'<select name="tag" id="tag">{options(tags)}</select>'
            + '<input type="submit" name="submit_button" value="Search">'
            + "</form>"
        )

    async def filter(self, request: web.Request) -> web.Response:
        form = await request.post()
        fixed = {k: form.get(k) for k in ASPNET_FIXED}
        if fixed != ASPNET_FIXED:
            return self._refuse(f"hidden fields lost: {fixed}")
        try:
            state = json.loads(base64.b64decode(str(form["__VIEWSTATE"])))
        except (KeyError, ValueError):
            return self._refuse("no valid __VIEWSTATE")
        author, tag = form.get("author"), form.get("tag")
        tags = sorted(t for a, t in QUOTES if a == author)
        if state["step"] == 1:
            # The author select posts back by itself (JavaScript): no button is sent.
            if "submit_button" in form or not tags:
                return self._refuse("step 1 wants an author and no button")
            return self._search_form(viewstate({"step": 2, "author": author}), str(author), tags)
        if state.get("author") != author or form.get("submit_button") != "Search":
            return self._refuse("step 2 posted another author, or without the button")
        quotes = QUOTES.get((str(author), str(tag)))
        if quotes is None:
            return self._refuse(f"no tag {tag!r} for {author!r}")
        return html(
            "".join(
                f'<div class="quote"><span class="content">{q}</span>'
                f'<span class="author">{author}</span><span class="tag">{tag}</span></div>'
                for q in quotes
            )
        )

    # -- a JSON scroll API -----------------------------------------------------------------
    async def api(self, request: web.Request) -> web.Response:
        if request.content_type != "application/json":
            return self._refuse(f"API wants JSON, got {request.content_type}")
        page = (await request.json())["page"]
        everything = [{"text": q, "author": a} for (a, _), qs in sorted(QUOTES.items()) for q in qs]
        chunk = everything[page - 1 : page]
        return web.json_response(
            {"page": page, "quotes": chunk, "has_next": page < len(everything)}
        )


class Collect:
    items: list[dict[str, Any]]

    def process_item(self, item: dict[str, Any], spider: Spider) -> dict[str, Any]:
        Collect.items.append(item)
        return item


async def crawl(spider: type[Spider], base: str, job_dir: Path | None) -> list[dict[str, Any]]:
    Collect.items = []
    settings = {**FAST, "BASE": base, "ITEM_PIPELINES": {Collect: 100}}
    stats = await Crawler(spider, settings, job_dir=job_dir).run()
    assert stats["finish_reason"] == "finished"
    return sorted(Collect.items, key=lambda item: json.dumps(item, sort_keys=True))


@pytest.fixture(params=["memory", "sqlite"])
def job_dir(request: pytest.FixtureRequest, tmp_path: Path) -> Path | None:
    return tmp_path / "job" if request.param == "sqlite" else None


class LoginSpider(Spider):
    name = "login"

    def start_requests(self) -> Any:
        yield FormRequest(self.settings["BASE"] + "/login", method="GET", callback=self.parse)

    def parse(self, response: Response) -> Any:
        assert isinstance(response, HtmlResponse)
        return FormRequest.from_response(
            response,
            formid="login",
            formdata={"username": "alice", "password": "s3cret"},
            callback=self.after_login,
        )

    def after_login(self, response: Response) -> Any:
        yield {
            "user": response.css("p.user::text").get(),
            "request": type(response.request).__name__,
            "redirected_from": response.meta.get("redirect_urls", [None])[0],
        }


async def test_login_form_with_a_csrf_token(serve: Any, job_dir: Path | None) -> None:
    site = PracticeSite()
    base = await serve(site.app)
    items = await crawl(LoginSpider, base, job_dir)
    assert site.refused == []
    assert items == [
        {"user": "Logged in as alice", "request": "FormRequest", "redirected_from": base + "/login"}
    ]


class ViewStateSpider(Spider):
    name = "viewstate"

    def start_requests(self) -> Any:
        yield FormRequest(self.settings["BASE"] + "/search.aspx", method="GET")

    def parse(self, response: Response) -> Any:
        for author in response.css("select#author > option::attr(value)").getall()[1:]:
            yield FormRequest.from_response(
                response,
                formdata={"author": author},
                dont_click=True,
                callback=self.parse_tags,
                cb_kwargs={"author": author},
            )

    def parse_tags(self, response: Response, author: str) -> Any:
        assert response.css("select#author > option[selected]::attr(value)").get() == author
        for tag in response.css("select#tag > option::attr(value)").getall()[1:]:
            yield FormRequest.from_response(
                response, formdata={"tag": tag}, callback=self.parse_results
            )

    def parse_results(self, response: Response) -> Any:
        for quote in response.css("div.quote"):
            yield {
                "text": quote.css("span.content::text").get(),
                "author": quote.css("span.author::text").get(),
                "tag": quote.css("span.tag::text").get(),
                "body": type(response.request).__name__ + ":" + response.request.body.decode(),
            }


async def test_aspnet_viewstate_form_posts_back_twice(serve: Any, job_dir: Path | None) -> None:
    site = PracticeSite()
    base = await serve(site.app)
    items = await crawl(ViewStateSpider, base, job_dir)
    assert site.refused == []
    assert [(i["author"], i["tag"], i["text"]) for i in items] == sorted(
        (a, t, q) for (a, t), qs in QUOTES.items() for q in qs
    )
    assert all(i["body"].startswith("FormRequest:__VIEWSTATE=") for i in items)
    assert all("submit_button=Search" in i["body"] for i in items)


class ScrollSpider(Spider):
    name = "scroll"

    def start_requests(self) -> Any:
        yield JsonRequest(self.settings["BASE"] + "/api/quotes", data={"page": 1})

    def parse(self, response: Response) -> Any:
        assert isinstance(response, JsonResponse)
        data = response.json()
        for quote in data["quotes"]:
            yield {**quote, "request": type(response.request).__name__}
        if data["has_next"]:
            yield JsonRequest(response.url, data={"page": data["page"] + 1})


async def test_json_scroll_api(serve: Any, job_dir: Path | None) -> None:
    site = PracticeSite()
    base = await serve(site.app)
    items = await crawl(ScrollSpider, base, job_dir)
    assert site.refused == []
    assert items == sorted(
        (
            {"text": q, "author": a, "request": "JsonRequest"}
            for (a, _), qs in QUOTES.items()
            for q in qs
        ),
        key=lambda item: json.dumps(item, sort_keys=True),
    )
