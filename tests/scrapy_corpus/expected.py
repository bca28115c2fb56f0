"""What each corpus spider must scrape, computed from the practice site's data set (never
copied from a crawl's output): one ``Case`` per file in ``spiders/``.

``items(data, base)`` is the expected item list (compared as a multiset: every item,
as often as expected); ``args`` are the spider arguments besides ``base_url``;
``stats`` are statistics the spider's own components must have set; ``needs`` names the
branch whose feature the spider needs while it is not merged (the test is then a strict
xfail).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from skitter.testing._practice import PracticeData, Quote

Items = list[dict[str, Any]]


@dataclass(frozen=True)
class Case:
    items: Callable[[PracticeData, str], Items]
    args: dict[str, str] = field(default_factory=dict)
    stats: dict[str, Any] = field(default_factory=dict)
    needs: str | None = None


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


def scroll(data: PracticeData, base: str) -> Items:
    return [{"author": q.author.name, "text": q.shown, "tags": list(q.tags)} for q in data.quotes]


CASES: dict[str, Case] = {
    "quotes_tutorial": Case(tutorial),
    "authors_follow_all": Case(authors),
    "quotes_async_start": Case(async_start),
    "quotes_by_tag": Case(by_tag("humor"), args={"tag": "humor"}),
    "quotes_with_authors": Case(quote_author),
    "quotes_xpath": Case(xpath),
    "quotes_pager_links": Case(pager),
    "quotes_depth_limit": Case(depth),
    "quotes_status_404": Case(status_404),
    "robots_obey": Case(polite),
    "api_scroll": Case(scroll),
}
