"""Scrapy's ``SitemapSpider``: crawl the URLs that sitemaps list.

``sitemap_urls`` may name sitemaps, sitemap indexes (followed where ``sitemap_follow``
matches) or robots.txt files (their ``Sitemap:`` lines). Each page URL goes to the
callback of the first ``sitemap_rules`` regex it matches, and to none if none does.
Entries stream from the parser into requests (the engine pulls them lazily), so a
sitemap of a million URLs is never a list of a million requests.
"""

from __future__ import annotations

import logging
import re
from collections.abc import AsyncIterator, Callable, Iterable, Iterator, Sequence
from typing import TYPE_CHECKING, Any

from skitter.http import Request, Response
from skitter.settings import DownloaderSettings
from skitter.spider import Spider
from skitter.spiders._sitemaps import (
    GZIP_MAGIC,
    Sitemap,
    SitemapTooLarge,
    gunzip,
    sitemap_urls_from_robots,
)

if TYPE_CHECKING:
    from skitter._types import CrawlContext

__all__ = ["SitemapSpider"]

log = logging.getLogger("skitter.spiders.sitemap")

Pattern = re.Pattern[str] | str


def _regex(value: Pattern) -> re.Pattern[str]:
    return re.compile(value) if isinstance(value, str) else value


class SitemapSpider(Spider):
    """Set ``sitemap_urls``; optionally ``sitemap_rules`` (``(regex, callback)`` pairs,
    the callback a method name or a method; default: everything to ``parse``),
    ``sitemap_follow`` (regexes of index entries to follow; default: all),
    ``sitemap_alternate_links`` (also crawl an entry's ``xhtml:link`` alternates) and
    override ``sitemap_filter(entries)`` to drop entries by their fields (``lastmod``...).
    """

    sitemap_urls: Sequence[str] = ()
    sitemap_rules: Sequence[tuple[Pattern, str | Callable[..., Any]]] = [("", "parse")]
    sitemap_follow: Sequence[Pattern] = [""]
    sitemap_alternate_links: bool = False

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self._cbs = [(_regex(r), self._callback_of(c)) for r, c in self.sitemap_rules]
        self._follow = [_regex(x) for x in self.sitemap_follow]
        self._max_size: int | None = None
        self._warn_size: int | None = None

    def _callback_of(self, callback: str | Callable[..., Any]) -> Callable[..., Any]:
        if isinstance(callback, str):
            method = getattr(self, callback, None)
            if not callable(method):
                raise AttributeError(
                    f"sitemap_rules callback {callback!r}: {type(self).__name__} has no such method"
                )
            return method  # type: ignore[no-any-return]
        # A function from the class body: the spider's bound method, which can be stored.
        name = getattr(callback, "__name__", "")
        if getattr(type(self), name, None) is callback:
            return getattr(self, name)  # type: ignore[no-any-return]
        return callback

    @classmethod
    def from_crawler(cls, crawler: CrawlContext, *args: Any, **kwargs: Any) -> Spider:
        spider = super().from_crawler(crawler, *args, **kwargs)
        assert isinstance(spider, SitemapSpider)
        limits = crawler.settings.view(DownloaderSettings)
        spider._max_size = getattr(spider, "download_maxsize", limits.download_maxsize)
        spider._warn_size = getattr(spider, "download_warnsize", limits.download_warnsize)
        return spider

    async def start(self) -> AsyncIterator[Any]:
        for url in self.sitemap_urls:
            yield Request(url, callback=self._parse_sitemap)

    def sitemap_filter(self, entries: Iterable[dict[str, Any]]) -> Iterable[dict[str, Any]]:
        """The entries to crawl; override to filter them by their fields."""
        yield from entries

    def _parse_sitemap(self, response: Response) -> Iterator[Request]:
        if response.url.endswith("/robots.txt"):
            for url in sitemap_urls_from_robots(response.body, response.url):
                yield Request(url, callback=self._parse_sitemap)
            return
        body = self._get_sitemap_body(response)
        sitemap = Sitemap(body) if body else None
        if sitemap is None or sitemap.type not in ("sitemapindex", "urlset"):
            log.warning("Ignoring invalid sitemap: %s", response)
            return
        entries = self.sitemap_filter(sitemap)
        if sitemap.type == "sitemapindex":
            for loc in self._locs(entries):
                if any(regex.search(loc) for regex in self._follow):
                    yield Request(loc, callback=self._parse_sitemap)
            return
        for loc in self._locs(entries):
            for regex, callback in self._cbs:
                if regex.search(loc):
                    yield Request(loc, callback=callback)
                    break

    def _locs(self, entries: Iterable[dict[str, Any]]) -> Iterator[str]:
        alternates = self.sitemap_alternate_links
        for entry in entries:
            loc = entry["loc"]
            if loc:
                yield loc
            if alternates:
                yield from entry.get("alternate", ())

    def _get_sitemap_body(self, response: Response) -> bytes | None:
        """The sitemap's XML, or None when the response is not a sitemap."""
        body = response.body
        if body[:2] == GZIP_MAGIC:
            meta = response.request.meta if response.request is not None else {}
            limit = meta.get("download_maxsize", self._max_size)
            warn = meta.get("download_warnsize", self._warn_size)
            try:
                xml = gunzip(body, limit or None)
            except SitemapTooLarge:
                log.warning(
                    "Ignoring sitemap %s: it inflates to more than DOWNLOAD_MAXSIZE (%s bytes)",
                    response,
                    limit,
                )
                return None
            except ValueError as exc:
                log.warning("Ignoring sitemap %s: not valid gzip (%s)", response, exc)
                return None
            if warn and len(body) < warn <= len(xml):
                log.warning(
                    "%s: sitemap of %d bytes inflated is larger than DOWNLOAD_WARNSIZE (%d)",
                    response,
                    len(xml),
                    warn,
                )
            return xml
        content_type = (response.header("Content-Type") or "").lower()
        if "xml" in content_type and "html" not in content_type:
            return body
        # A .xml.gz that is not gzip was inflated on the way (Content-Encoding: gzip).
        if response.url.endswith((".xml", ".xml.gz")):
            return body
        return None
