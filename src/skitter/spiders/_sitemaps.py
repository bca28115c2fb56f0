"""Reading sitemaps: robots.txt ``Sitemap:`` lines, gzip files, urlsets and indexes.

A sitemap is data from a stranger, up to 50,000 URLs and 50 MB uncompressed by the
protocol, and often much more in practice, so:

- the XML is read by lxml's ``iterparse`` with entities left unresolved (no billion
  laughs), no network access (no external DTD), no processing instructions, and each
  ``<url>``/``<sitemap>`` entry is dropped from the tree once it is read, so memory
  holds one entry, not the document;
- a gzip file is inflated by skitter's bounded decoder (the one the transport uses for
  ``Content-Encoding``) under DOWNLOAD_MAXSIZE, so a gzip bomb stops at the limit.
"""

from __future__ import annotations

from collections.abc import Iterator
from io import BytesIO
from typing import Any
from urllib.parse import urljoin

from lxml import etree

__all__ = ["GZIP_MAGIC", "Sitemap", "SitemapTooLarge", "gunzip", "sitemap_urls_from_robots"]

GZIP_MAGIC = b"\x1f\x8b"
_ENTRIES = frozenset({"url", "sitemap"})


class SitemapTooLarge(ValueError):
    """The inflated sitemap is larger than the size allowed."""


def gunzip(data: bytes, limit: int | None) -> bytes:
    """``data`` inflated, refusing more than ``limit`` bytes (None: no limit) with
    SitemapTooLarge, and a corrupt or truncated file with another ValueError."""
    # Imported here: the downloader package (aiohttp and all) is loaded only by a
    # crawl, not by ``import skitter.spiders``.
    from skitter.downloader.wiring import decoder_for

    decoder = decoder_for("gzip", limit)
    assert decoder is not None
    body = decoder.feed(data)
    if decoder.exceeded:
        raise SitemapTooLarge(f"gzip sitemap inflates to more than {limit} bytes")
    return body + decoder.finish()


def sitemap_urls_from_robots(robots: bytes, base_url: str) -> Iterator[str]:
    """The URLs of a robots.txt's ``Sitemap:`` lines, resolved against ``base_url``."""
    for line in robots.splitlines():
        if line.lstrip()[:8].lower() == b"sitemap:":
            try:
                url = line.partition(b":")[2].strip().decode()
            except UnicodeDecodeError:
                continue
            if url:
                yield urljoin(base_url, url)


def _name(element: Any) -> str:
    tag = element.tag
    if not isinstance(tag, str):
        return ""  # a comment or an entity reference
    return tag.rpartition("}")[2]


class Sitemap:
    """One sitemap document: ``type`` is its root's name (``urlset`` or
    ``sitemapindex``); iterating gives a dict per entry that has a ``<loc>``: its
    child elements by name (text stripped), and ``alternate`` for the hrefs of its
    ``<xhtml:link>`` children."""

    __slots__ = ("_events", "type")

    def __init__(self, body: bytes) -> None:
        self._events = etree.iterparse(
            BytesIO(body),
            events=("start", "end"),
            recover=True,
            resolve_entities=False,
            no_network=True,
            remove_comments=True,
            remove_pis=True,
            remove_blank_text=True,
            collect_ids=False,
            huge_tree=False,
        )
        try:
            _, root = next(self._events)
        except (StopIteration, etree.XMLSyntaxError):
            self.type = ""
        else:
            self.type = _name(root)

    def __iter__(self) -> Iterator[dict[str, Any]]:
        try:
            for event, element in self._events:
                if event == "end" and _name(element) in _ENTRIES:
                    entry = _entry(element)
                    if entry is not None:
                        yield entry
        except etree.XMLSyntaxError:
            return  # what could be read was given; the rest is not XML


def _entry(element: Any) -> dict[str, Any] | None:
    entry: dict[str, Any] = {}
    alternate: list[str] = []
    for child in element:
        name = _name(child)
        if name == "link":
            href = child.get("href")
            if href:
                alternate.append(href)
        elif name:
            entry[name] = child.text.strip() if child.text else ""
    # Forget the entry and those before it: the tree never holds more than one.
    element.clear()
    parent = element.getparent()
    if parent is not None:
        while element.getprevious() is not None:
            del parent[0]
    if "loc" not in entry:
        return None
    if alternate:
        entry["alternate"] = alternate
    return entry
