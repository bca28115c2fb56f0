"""The practice site's machine-readable side: robots.txt, a sitemap index of gzipped
sitemaps, an RSS feed, two CSV feeds and a JSON API, all from the same data set as the
HTML pages. URLs in them are absolute, on the origin the request was made to, as a real
site's are."""

from __future__ import annotations

import csv
import gzip
import io
from datetime import UTC, datetime, time
from email.utils import format_datetime
from html import escape
from typing import Any

import orjson
from aiohttp import web

from skitter.testing._practice._data import PracticeData, Quote
from skitter.testing._practice._state import STATE

__all__ = [
    "SITEMAPS",
    "api_quotes",
    "api_search",
    "authors_csv",
    "quotes_csv",
    "quotes_rss",
    "robots_txt",
    "sitemap",
    "sitemap_index",
]

#: The sitemaps the index lists, each served gzipped at ``/sitemaps/<name>.xml.gz``.
SITEMAPS = ("quotes", "authors", "tags")
_SITEMAP_NS = "http://www.sitemaps.org/schemas/sitemap/0.9"


def _origin(request: web.Request) -> str:
    return str(request.url.origin())


async def robots_txt(request: web.Request) -> web.Response:
    text = f"User-agent: *\nDisallow: /private/\n\nSitemap: {_origin(request)}/sitemap.xml\n"
    return web.Response(text=text, content_type="text/plain")


def _xml(text: str) -> web.Response:
    return web.Response(text=text, content_type="application/xml", charset="utf-8")


async def sitemap_index(request: web.Request) -> web.Response:
    origin = _origin(request)
    # Each sitemap's lastmod is its newest entry's, as generators write it.
    newest = max(q.added for q in request.app[STATE].data.quotes).isoformat()
    entries = "".join(
        f"  <sitemap><loc>{origin}/sitemaps/{name}.xml.gz</loc><lastmod>{newest}</lastmod>"
        "</sitemap>\n"
        for name in SITEMAPS
    )
    return _xml(
        f'<?xml version="1.0" encoding="UTF-8"?>\n<sitemapindex xmlns="{_SITEMAP_NS}">\n'
        f"{entries}</sitemapindex>\n"
    )


def _urlset(request: web.Request, name: str, data: PracticeData) -> str:
    origin = _origin(request)
    rows = []
    if name == "quotes":
        for q in data.quotes:
            rows.append(
                f"  <url><loc>{origin}{q.path}</loc><lastmod>{q.added.isoformat()}</lastmod></url>"
            )
    elif name == "authors":
        for a in data.authors:
            rows.append(
                f"  <url><loc>{origin}{a.path}</loc>"
                f'<xhtml:link rel="alternate" hreflang="fr" href="{origin}{a.path}?lang=fr"/>'
                "</url>"
            )
    else:
        rows.extend(f"  <url><loc>{origin}/tag/{tag}/</loc></url>" for tag in data.tags)
    body = "\n".join(rows)
    return (
        f'<?xml version="1.0" encoding="UTF-8"?>\n<urlset xmlns="{_SITEMAP_NS}" '
        f'xmlns:xhtml="http://www.w3.org/1999/xhtml">\n{body}\n</urlset>\n'
    )


async def sitemap(request: web.Request) -> web.Response:
    """A gzip file, as sites serve ``.xml.gz`` sitemaps: the body itself is compressed
    (no Content-Encoding), so the reader has to gunzip it."""
    name = request.match_info["name"]
    if name not in SITEMAPS:
        raise web.HTTPNotFound()
    text = _urlset(request, name, request.app[STATE].data)
    body = gzip.compress(text.encode(), mtime=0)
    return web.Response(body=body, content_type="application/x-gzip")


def _rss_item(origin: str, quote: Quote) -> str:
    stamp = format_datetime(datetime.combine(quote.added, time(12), UTC))
    categories = "".join(f"<category>{tag}</category>" for tag in quote.tags)
    return (
        f"<item><title>{escape(quote.text, quote=False)}</title>"
        f"<link>{origin}{quote.path}</link>"
        f"<dc:creator>{escape(quote.author.name)}</dc:creator>{categories}"
        f"<pubDate>{stamp}</pubDate><guid>{origin}{quote.path}</guid></item>"
    )


async def quotes_rss(request: web.Request) -> web.Response:
    origin = _origin(request)
    items = "\n".join(_rss_item(origin, q) for q in request.app[STATE].data.quotes)
    return web.Response(
        text=(
            '<?xml version="1.0" encoding="UTF-8"?>\n'
            '<rss version="2.0" xmlns:dc="http://purl.org/dc/elements/1.1/">\n<channel>\n'
            f"<title>Quotes to Practice</title><link>{origin}/</link>\n{items}\n"
            "</channel>\n</rss>\n"
        ),
        content_type="application/rss+xml",
        charset="utf-8",
    )


def _csv(rows: list[list[str]], delimiter: str) -> web.Response:
    out = io.StringIO()
    csv.writer(out, delimiter=delimiter, lineterminator="\r\n").writerows(rows)
    return web.Response(text=out.getvalue(), content_type="text/csv", charset="utf-8")


async def quotes_csv(request: web.Request) -> web.Response:
    """A header row, then one quote a row; tags are joined by ``|``; texts with commas
    and double quotes are quoted as the csv module does."""
    data = request.app[STATE].data
    rows = [["id", "text", "author", "tags", "added"]]
    rows.extend(
        [str(q.id), q.text, q.author.name, "|".join(q.tags), q.added.isoformat()]
        for q in data.quotes
    )
    return _csv(rows, ",")


async def authors_csv(request: web.Request) -> web.Response:
    """Semicolons and no header row: the reader must be told the columns."""
    data = request.app[STATE].data
    return _csv([[a.slug, a.name, a.born_date, a.born_location] for a in data.authors], ";")


def _api_quote(quote: Quote) -> dict[str, Any]:
    author = quote.author
    return {
        "author": {
            "goodreads_link": author.goodreads_link,
            "name": author.name,
            "slug": author.slug,
        },
        "tags": list(quote.tags),
        "text": quote.shown,
    }


def _api_page(data: PracticeData, page: int, tag: str | None) -> dict[str, Any]:
    quotes = data.tag_page(tag, page) if tag else data.page(page)
    count = data.tag_page_count(tag) if tag else data.page_count
    return {
        "has_next": page < count,
        "page": page,
        "quotes": [_api_quote(q) for q in quotes] if page >= 1 else [],
        "tag": tag,
        "top_ten_tags": list(data.top_tags()),
    }


def _json(value: Any, status: int = 200) -> web.Response:
    return web.Response(body=orjson.dumps(value), status=status, content_type="application/json")


async def api_quotes(request: web.Request) -> web.Response:
    """``GET /api/quotes?page=N[&tag=T]``: the infinite-scroll API, ``has_next`` says
    whether to ask for the next page."""
    data = request.app[STATE].data
    try:
        page = int(request.query.get("page", "1"))
    except ValueError:
        return _json({"error": "page must be a number"}, 400)
    tag = request.query.get("tag") or None
    return _json(_api_page(data, page, tag))


async def api_search(request: web.Request) -> web.Response:
    """``POST /api/search`` with a JSON body ``{"tag": T, "page": N}``: only a JSON
    request is answered, as an API behind a JavaScript front end does."""
    if request.content_type != "application/json":
        return _json({"error": "send application/json"}, 415)
    try:
        query = orjson.loads(await request.read())
    except orjson.JSONDecodeError:
        return _json({"error": "the body is not JSON"}, 400)
    data = request.app[STATE].data
    if not isinstance(query, dict):
        return _json({"error": "send a JSON object"}, 400)
    tag, page = query.get("tag"), query.get("page", 1)
    if tag not in data.tags or not isinstance(page, int):
        return _json({"error": "give a known tag and a page number"}, 400)
    return _json(_api_page(data, page, tag))
