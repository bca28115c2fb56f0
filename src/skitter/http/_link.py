"""A link found in a page, as a link extractor reports it (Scrapy's ``Link``)."""

from __future__ import annotations

import re
from collections.abc import Iterable, Iterator
from dataclasses import dataclass
from urllib.parse import urljoin

from parsel import Selector, SelectorList

__all__ = ["Link", "NotALink", "base_url_of", "href_of", "link_hrefs"]

_NOT_LINKS = ("javascript:", "mailto:", "tel:", "data:", "#")

_BASE_HREF = re.compile(
    rb"<base\s[^>]*href\s*=\s*(?:\"\s*([^\"]+)\"|'\s*([^']+)'|([^\"'\s>]+))", re.IGNORECASE
)


@dataclass(frozen=True, slots=True)
class Link:
    """``url`` is absolute (with its fragment, as Scrapy's link extractor leaves it);
    ``text`` is the anchor's text; ``fragment`` is for producers that split it off
    (empty from the link extractor, as in Scrapy); ``nofollow`` whether the anchor
    carries ``rel="nofollow"``. ``response.follow`` and ``follow_all`` take a Link as
    they take a URL."""

    url: str
    text: str = ""
    fragment: str = ""
    nofollow: bool = False

    def __post_init__(self) -> None:
        if not isinstance(self.url, str):
            raise TypeError(f"Link urls must be str objects, got {type(self.url).__name__}")


def base_url_of(url: str, body: bytes) -> str:
    """The URL a page's relative links resolve against: its ``<base href>`` (looked for
    in the first 4 KiB, where the <head> is), else ``url``."""
    head = body[:4096]
    if b"<base" in head or b"<BASE" in head:
        match = _BASE_HREF.search(head)
        if match:
            href: bytes = next(group for group in match.groups() if group is not None)
            return urljoin(url, href.strip().decode("ascii", "replace"))
    return url


class NotALink(ValueError):
    """A selection that names no link: an element other than <a>/<link> with neither
    href nor src, or a value that is not an element (``count(//a)``)."""


def href_of(item: str | Selector | Link) -> str | None:
    """The URL ``item`` names; None for an element that could have one but has not."""
    if item is None:
        raise ValueError("url can't be None")
    if isinstance(item, str):
        return item
    if isinstance(item, Link):
        return item.url
    if isinstance(item, Selector):
        root = item.root
        if isinstance(root, str):  # an attribute or text selection: its value is the URL
            return root
        attrib = getattr(root, "attrib", None)
        tag = getattr(root, "tag", None)
        if attrib is None or not isinstance(tag, str):
            raise NotALink(f"Unsupported selector: {item!r} selects no element")
        href: str | None = attrib.get("href")
        if href is None:
            href = attrib.get("src")  # skitter's extension: an <img>, <script>, <iframe>
        if href is None and tag not in ("a", "link"):
            raise NotALink(
                f"Only <a> and <link> elements are supported, or an element with an href "
                f"or src attribute; got <{tag}>"
            )
        return href
    if isinstance(item, SelectorList):
        raise ValueError(f"cannot follow a SelectorList ({item!r}): use follow_all")
    raise TypeError(f"cannot follow a {type(item).__name__}")


def link_hrefs(items: Iterable[str | Selector | Link]) -> Iterator[str]:
    """The hrefs of ``items`` that may be links (stripped), for ``follow_all``: what is
    not a link (an element without one, ``mailto:``, ``javascript:``, a bare fragment,
    an empty href) is skipped, as a link extractor would."""
    for item in items:
        try:
            href = href_of(item)
        except NotALink:
            continue
        if href:
            href = href.strip()
            if href and not href.startswith(_NOT_LINKS):
                yield href
