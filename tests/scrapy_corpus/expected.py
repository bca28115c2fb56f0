"""What each corpus spider must scrape, computed from the practice site's data set (never
copied from a crawl's output): one ``Case`` per file in ``spiders/``.

``items(data, base)`` is the expected item list (compared as a multiset: every item,
as often as expected); ``args`` are the spider arguments besides ``base_url``;
``stats`` are statistics the spider's own components must have set; ``needs`` names the
branch whose feature the spider needs while it is not merged (the test is then a strict
xfail); ``scrapy_differs`` says why Scrapy itself scrapes something else, when it does.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from skitter.testing._practice import PracticeData, Quote, practice_data
from skitter.testing._practice._site import LINKS

Items = list[dict[str, Any]]


@dataclass(frozen=True)
class Case:
    items: Callable[[PracticeData, str], Items]
    args: dict[str, str] = field(default_factory=dict)
    stats: dict[str, Any] = field(default_factory=dict)
    needs: str | None = None
    scrapy_differs: str = ""


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


HTTP = "FormRequest/JsonRequest/Response classes from i15-http"
SPIDERS = "Item/ItemLoader/LinkExtractor/CrawlSpider/feed spiders from i15-spiders"
SIGNALS = "signals/extensions/stats/Failure/get_retry_request from i15-signals"


def declared_items(data: PracticeData, base: str) -> Items:
    return tutorial(data, base)


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


def login(data: PracticeData, base: str) -> Items:
    return [{"author": q.author.name, "goodreads": q.author.goodreads_link} for q in data.quotes]


def token_login(data: PracticeData, base: str) -> Items:
    return [{"name": a.name, "logged_in": True} for a in data.authors]


def viewstate(data: PracticeData, base: str) -> Items:
    return [
        {"quote": q.shown, "author": a.name, "tag": tag}
        for a in data.authors
        for tag in data.tags_of(a)
        for q in data.by(a)
        if tag in q.tags
    ]


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


def errback(data: PracticeData, base: str) -> Items:
    ok: Items = [{"url": f"{base}/quote/1/", "ok": True}]
    return ok + [
        {"url": f"{base}/status/{code}/", "ok": False, "status": code} for code in (404, 500, 410)
    ]


def busy(data: PracticeData, base: str) -> Items:
    return [{"text": q.shown, "retries": 1} for q in data.quotes[:5]]


def css_login(data: PracticeData, base: str) -> Items:
    return [
        {"url": base + q.path, "logged_in": True, "goodreads": q.author.goodreads_link}
        for q in data.quotes
    ]


def link_options(data: PracticeData, base: str) -> Items:
    page = data.page(1)
    paths = {"/", "/login", "/page/2/"}
    paths |= {q.author.path for q in page} | {q.path for q in page}
    paths |= {f"/tag/{t}/" for q in page for t in q.tags} | {f"/tag/{t}/" for t in data.top_tags()}
    return [{"url": base + path} for path in paths]


def serializer(data: PracticeData, base: str) -> Items:
    return [{"text": q.shown, "tags": ",".join(q.tags)} for q in data.page(1)]


def _counted_pages(data: PracticeData, base: str) -> list[tuple[str, tuple[Quote, ...]]]:
    """The pages signal_counts parses: ``/``, then every ``/page/N/`` but the last (its
    callback raises)."""
    pages = [(f"{base}/", data.page(1))]
    return pages + [(f"{base}/page/{n}/", data.page(n)) for n in range(1, data.page_count)]


def signal_counts(data: PracticeData, base: str) -> Items:
    return [
        {"text": q.shown, "author": q.author.name, "tags": list(q.tags)}
        for _, quotes in _counted_pages(data, base)
        for q in quotes
        if q.tags and q.author.name != "Ada Quill"
    ]


def signal_counts_stats() -> dict[str, Any]:
    data = practice_data()
    parsed = [q for _, quotes in _counted_pages(data, "") for q in quotes]
    last = data.page_count
    # Pager links yielded: "/" and page 1 link to page 2; pages 2 to last-1 link both
    # ways; the last page's callback raises before it yields its link back.
    yielded = 2 + 2 * (last - 2)
    responses = 1 + last  # "/", then /page/1/ to /page/<last>/
    scheduled = 1 + yielded  # and the start request
    return {
        "counted/engine_started": 1,
        "counted/spider_opened": 1,
        "counted/request_scheduled": scheduled,
        "counted/request_dropped": scheduled - responses,
        "counted/request_reached_downloader": responses,
        "counted/request_left_downloader": responses,
        "counted/headers_received": responses,
        "counted/response_downloaded": responses,
        "counted/response_received": responses,
        "counted/item_scraped": len(signal_counts(data, "")),
        "counted/item_dropped": sum(not q.tags for q in parsed),
        "counted/item_error": sum(bool(q.tags) and q.author.name == "Ada Quill" for q in parsed),
        "counted/spider_error": 1,
    }


def retry_meta(data: PracticeData, base: str) -> Items:
    return [{"case": case, "status": 503} for case in ("default", "once", "never")]


def broken_links(data: PracticeData, base: str) -> Items:
    status = {"/quote/1/": 200, "/status/500/": 500}
    return [{"url": base + path, "status": status.get(path, 404)} for path in LINKS]


MIN_WORDS = 9


def pipelines(data: PracticeData, base: str) -> Items:
    return [
        {"text": q.shown, "words": len(q.shown.split())}
        for q in data.quotes
        if len(q.shown.split()) >= MIN_WORDS
    ]


def extension(data: PracticeData, base: str) -> Items:
    return [{"author": q.author.name, "tags": list(q.tags)} for q in data.quotes]


def extension_stats() -> dict[str, Any]:
    counts = [len(q.tags) for q in practice_data().quotes]
    return {
        "quotestats/opened": "extension",
        "quotestats/items": len(counts),
        "quotestats/max_tags": max(counts),
        "quotestats/min_tags": min(counts),
        "quotestats/closed": "finished",
    }


def signals(data: PracticeData, base: str) -> Items:
    pages = [(1, f"{base}/page/1/"), (data.page_count, f"{base}/page/{data.page_count}/")]
    return [{"text": q.shown, "url": url} for n, url in pages for q in data.page(n)]


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


CASES: dict[str, Case] = {
    "quotes_tutorial": Case(tutorial),
    "authors_follow_all": Case(authors),
    "quotes_async_start": Case(async_start),
    "quotes_by_tag": Case(
        by_tag("humor"),
        args={"tag": "humor"},
        scrapy_differs="Scrapy 2.19 no longer calls start_requests() (skitter does)",
    ),
    "quotes_with_authors": Case(quote_author),
    "quotes_xpath": Case(xpath),
    "quotes_pager_links": Case(pager),
    "quotes_depth_limit": Case(depth),
    "quotes_status_404": Case(status_404),
    "robots_obey": Case(polite),
    "api_scroll": Case(scroll),
    "whole_site": Case(whole_site),
    "middlewares_custom": Case(middlewares),
    "quotes_items": Case(declared_items, needs=SPIDERS),
    "quotes_loader": Case(loader, needs=SPIDERS),
    "crawl_authors": Case(authors_crawl, needs=SPIDERS),
    "crawl_tags": Case(tags_crawl, needs=SPIDERS),
    "crawl_errback": Case(broken_links, needs=SPIDERS),
    "link_extractor_tags": Case(tag_links, needs=SPIDERS),
    "sitemap_robots": Case(sitemap_robots, needs=SPIDERS),
    "sitemap_filter": Case(sitemap_filter, needs=SPIDERS),
    "sitemap_alternates": Case(sitemap_alternates, needs=SPIDERS),
    "xml_feed": Case(rss, needs=SPIDERS),
    "xml_feed_namespaces": Case(rss_dc, needs=SPIDERS),
    "csv_feed": Case(quotes_csv, needs=SPIDERS),
    "csv_feed_headers": Case(authors_csv, needs=SPIDERS),
    "login": Case(login, needs=HTTP),
    "login_formrequest": Case(token_login, needs=HTTP),
    "login_formcss": Case(css_login, needs=HTTP),
    "link_extractor_options": Case(link_options, needs=SPIDERS),
    "item_serializer": Case(serializer, needs=SPIDERS),
    "viewstate_search": Case(viewstate, needs=HTTP),
    "api_json_request": Case(json_search, needs=HTTP),
    "response_types": Case(response_types, needs=HTTP),
    "errback_httperror": Case(errback, needs=SIGNALS),
    "retry_busy": Case(busy, needs=SIGNALS),
    "retry_meta": Case(
        retry_meta,
        # default: 2 retries, then gives up; once: 1, then gives up; never: none
        stats={"retry/count": 3, "retry/max_reached": 2},
        needs=SIGNALS,
    ),
    "pipelines_from_crawler": Case(pipelines, needs=SIGNALS),
    "extension_signals": Case(extension, stats=extension_stats(), needs=SIGNALS),
    "extension_signal_counts": Case(signal_counts, stats=signal_counts_stats(), needs=SIGNALS),
    "spider_signals": Case(signals, stats={"signals/responses": 2}, needs=SIGNALS),
}
