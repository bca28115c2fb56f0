"""The items (and statistics) of the spiders that bring their own components: errbacks,
retries, pipelines, extensions, signal handlers."""

from __future__ import annotations

from typing import Any

from skitter.testing._practice import PracticeData, Quote, practice_data

from ._expect_pages import Items


def errback(data: PracticeData, base: str) -> Items:
    ok: Items = [{"url": f"{base}/quote/1/", "ok": True}]
    return ok + [
        {"url": f"{base}/status/{code}/", "ok": False, "status": code} for code in (404, 500, 410)
    ]


def busy(data: PracticeData, base: str) -> Items:
    return [{"text": q.shown, "retries": 1} for q in data.quotes[:5]]


def retry_meta(data: PracticeData, base: str) -> Items:
    return [{"case": case, "status": 503} for case in ("default", "once", "never")]


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


def signals(data: PracticeData, base: str) -> Items:
    pages = [(1, f"{base}/page/1/"), (data.page_count, f"{base}/page/{data.page_count}/")]
    return [{"text": q.shown, "url": url} for n, url in pages for q in data.page(n)]
