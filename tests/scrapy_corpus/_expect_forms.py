"""The items of the spiders that log in, post forms and read the JSON API."""

from __future__ import annotations

from skitter.testing._practice import PracticeData

from ._expect_pages import Items


def login(data: PracticeData, base: str) -> Items:
    return [{"author": q.author.name, "goodreads": q.author.goodreads_link} for q in data.quotes]


def token_login(data: PracticeData, base: str) -> Items:
    return [{"name": a.name, "logged_in": True} for a in data.authors]


def css_login(data: PracticeData, base: str) -> Items:
    return [
        {"url": base + q.path, "logged_in": True, "goodreads": q.author.goodreads_link}
        for q in data.quotes
    ]


def viewstate(data: PracticeData, base: str) -> Items:
    return [
        {"quote": q.shown, "author": a.name, "tag": tag}
        for a in data.authors
        for tag in data.tags_of(a)
        for q in data.by(a)
        if tag in q.tags
    ]


def scroll(data: PracticeData, base: str) -> Items:
    return [{"author": q.author.name, "text": q.shown, "tags": list(q.tags)} for q in data.quotes]


def json_search(data: PracticeData, base: str) -> Items:
    return [
        {"tag": tag, "text": q.shown, "page": n}
        for tag in data.top_tags()
        for n in range(1, data.tag_page_count(tag) + 1)
        for q in data.tag_page(tag, n)
    ]


def response_types(data: PracticeData, base: str) -> Items:
    kinds = {
        "/quote/1/": "html",
        "/feeds/quotes.xml": "xml",
        "/api/quotes?page=1": "text",
        "/robots.txt": "text",
        "/sitemaps/tags.xml.gz": "binary",
    }
    return [{"url": base + path, "kind": kind} for path, kind in kinds.items()]
