"""The items of the sitemap, XML feed and CSV feed spiders."""

from __future__ import annotations

from skitter.testing._practice import PracticeData

from ._expect_pages import Items


def sitemap_robots(data: PracticeData, base: str) -> Items:
    quotes: Items = [{"quote": q.shown, "added": q.added.isoformat()} for q in data.quotes]
    return quotes + [{"author": a.name} for a in data.authors]


def sitemap_filter(data: PracticeData, base: str) -> Items:
    return [
        {"url": base + q.path, "added": q.added.isoformat()}
        for q in data.quotes
        if q.added.year >= 2025
    ]


def sitemap_alternates(data: PracticeData, base: str) -> Items:
    return [
        {"url": f"{base}{a.path}{query}", "lang": lang, "name": a.name}
        for a in data.authors
        for query, lang in (("", "en"), ("?lang=fr", "fr"))
    ]


def rss(data: PracticeData, base: str) -> Items:
    return [
        {"title": q.text, "link": base + q.path, "categories": list(q.tags)} for q in data.quotes
    ]


def rss_dc(data: PracticeData, base: str) -> Items:
    return [{"creator": q.author.name, "guid": base + q.path} for q in data.quotes]


def quotes_csv(data: PracticeData, base: str) -> Items:
    return [
        {"id": q.id, "text": q.text, "author": q.author.name, "tags": list(q.tags)}
        for q in data.quotes
    ]


def authors_csv(data: PracticeData, base: str) -> Items:
    return [{"slug": a.slug, "name": a.name, "location": a.born_location} for a in data.authors]


def selector(data: PracticeData, base: str) -> Items:
    return [{"title": q.text, "creator": q.author.name} for q in data.quotes]
