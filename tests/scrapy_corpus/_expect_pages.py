"""The items of the spiders that crawl the practice site's HTML pages."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from skitter.testing._practice import PracticeData, Quote
from skitter.testing._practice._site import LINKS

Items = list[dict[str, Any]]


def _pages(data: PracticeData) -> list[tuple[int, tuple[Quote, ...]]]:
    return [(n, data.page(n)) for n in range(1, data.page_count + 1)]


def _home_url(base: str, number: int) -> str:
    """The URL page ``number`` is reached by when a crawl starts at ``/``."""
    return f"{base}/" if number == 1 else f"{base}/page/{number}/"


def tutorial(data: PracticeData, base: str) -> Items:
    return [{"text": q.shown, "author": q.author.name, "tags": list(q.tags)} for q in data.quotes]


def authors(data: PracticeData, base: str) -> Items:
    return [{"name": a.name, "birthdate": a.born_date, "bio": a.description} for a in data.authors]


def async_start(data: PracticeData, base: str) -> Items:
    return [
        {"page": n, "text": q.shown, "author": q.author.name}
        for n, quotes in _pages(data)
        for q in quotes
    ]


def by_tag(tag: str) -> Callable[[PracticeData, str], Items]:
    def items(data: PracticeData, base: str) -> Items:
        return [{"text": q.shown, "author": q.author.name} for q in data.tagged(tag)]

    return items


def quote_author(data: PracticeData, base: str) -> Items:
    return [
        {
            "text": q.shown,
            "author": q.author.name,
            "born": q.author.born_date,
            "listed_on": _home_url(base, n),
        }
        for n, quotes in _pages(data)
        for q in quotes
    ]


def xpath(data: PracticeData, base: str) -> Items:
    return [
        {"id": q.id, "text": q.text, "author": q.author.name, "keywords": list(q.tags)}
        for q in data.quotes
    ]


def pager(data: PracticeData, base: str) -> Items:
    # "/" first, then "/page/1/" again through page 2's Previous link.
    seen = [(f"{base}/", data.page(1))] + [
        (f"{base}/page/{n}/", quotes) for n, quotes in _pages(data)
    ]
    return [{"text": q.shown, "url": url} for url, quotes in seen for q in quotes]


def depth(data: PracticeData, base: str) -> Items:
    return [{"text": q.shown, "depth": n - 1} for n, quotes in _pages(data)[:3] for q in quotes]


def status_404(data: PracticeData, base: str) -> Items:
    return [
        {"page": n, "quotes": len(data.page(n))}
        if n <= data.page_count
        else {"page": n, "missing": True}
        for n in range(1, 11)
    ]


def polite(data: PracticeData, base: str) -> Items:
    quote = data.quote(7)
    assert quote is not None
    return [
        {"url": f"{base}/", "title": "Quotes to Practice"},
        {"url": f"{base}/quote/7/", "title": "Quote 7 | Quotes"},
    ]


def whole_site(data: PracticeData, base: str) -> Items:
    """Every page a link leads to from ``/`` (no form is sent, so nobody is logged in)."""
    titles = {"/": "Quotes to Practice", "/login": "Login | Quotes"}
    titles.update({f"/page/{n}/": "Quotes to Practice" for n in range(1, data.page_count + 1)})
    titles.update({f"/tag/{tag}/": "Quotes to Practice" for tag in data.top_tags()})
    for tag in data.tags:
        pages = range(1, data.tag_page_count(tag) + 1)
        titles.update({f"/tag/{tag}/page/{n}/": "Quotes to Practice" for n in pages})
    titles.update({a.path: f"{a.name} | Quotes" for a in data.authors})
    titles.update({q.path: f"Quote {q.id} | Quotes" for q in data.quotes})
    # The start URL skips the duplicate filter (dont_filter) and so is not recorded in
    # it either: the "/" link in the header fetches it once more, as in Scrapy.
    again = [{"url": f"{base}/", "title": titles["/"]}]
    return again + [{"url": base + path, "title": title} for path, title in titles.items()]


def middlewares(data: PracticeData, base: str) -> Items:
    quotes: Items = [{"text": q.shown, "tags": list(q.tags)} for q in data.quotes if q.tags]
    return quotes + [
        {"url": f"{base}{a.path}?lang=fr", "lang": "fr", "born": "Né le"} for a in data.authors
    ]


def declared_items(data: PracticeData, base: str) -> Items:
    return tutorial(data, base)


def serializer(data: PracticeData, base: str) -> Items:
    return [{"text": q.shown, "tags": ",".join(q.tags)} for q in data.page(1)]


def loader(data: PracticeData, base: str) -> Items:
    quotes: Items = []
    for n, page in _pages(data):
        for q in page:
            item: dict[str, Any] = {"text": q.text, "author": q.author.name}
            if q.tags:  # an ItemLoader sets no field it was given no value for
                item["tags"] = list(q.tags)
            item["url"] = _home_url(base, n)
            quotes.append(item)
    people = [{"name": a.name, "born": f"{a.born_date} in {a.born_location}"} for a in data.authors]
    return quotes + people


def authors_crawl(data: PracticeData, base: str) -> Items:
    return [{"name": a.name, "born": a.born_date, "where": a.born_location} for a in data.authors]


def tags_crawl(data: PracticeData, base: str) -> Items:
    start: Items = [{"start": f"{base}/", "quotes": len(data.page(1))}]
    return start + [
        {
            "tag": tag,
            "source": "top ten",
            "origin": f"{base}/",
            "first_page": len(data.tag_page(tag, 1)),
        }
        for tag in data.top_tags()
        if tag != "humor"
    ]


def tag_links(data: PracticeData, base: str) -> Items:
    out: Items = []
    for n, page in _pages(data):
        seen = dict.fromkeys(t for q in page for t in q.tags if t != "humor")
        out += [
            {"page": _home_url(base, n), "url": f"{base}/tag/{t}/page/1/", "text": t} for t in seen
        ]
    return out


def link_options(data: PracticeData, base: str) -> Items:
    page = data.page(1)
    paths = {"/", "/login", "/page/2/"}
    paths |= {q.author.path for q in page} | {q.path for q in page}
    paths |= {f"/tag/{t}/" for q in page for t in q.tags} | {f"/tag/{t}/" for t in data.top_tags()}
    return [{"url": base + path} for path in paths]


def broken_links(data: PracticeData, base: str) -> Items:
    status = {"/quote/1/": 200, "/status/500/": 500}
    return [{"url": base + path, "status": status.get(path, 404)} for path in LINKS]


def script_quotes(data: PracticeData, base: str) -> Items:
    return [{"author": q.author.name} for q in data.quotes]
