"""Scrapy's ``LinkExtractor``: the links of a page that a set of rules keeps.

A CrawlSpider runs it on every page it downloads, so it works on the tree the response
has already parsed (``response.selector``, shared with the callback's own ``css``
calls) and keeps the per-link cost to a few string operations in the common case:

- elements are found by lxml's C iterator filtered by tag name, not by a Python loop
  over every node (unless ``tags`` has ``"*"``);
- relative links are resolved by the response's own resolver (``response.urljoin``,
  which equals ``urljoin`` but skips it for plain paths);
- ``safe_url_string`` (percent-encoding, IDNA) runs only for URLs it would change:
  one regex recognizes the ones it returns as they are.

What differs from Scrapy, on purpose: ``allow_domains``/``deny_domains`` compare the
host without its port (``example.com`` matches ``http://example.com:8080/``), as
``allowed_domains`` does; a domain given with a port matches that host and port.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterable, Iterator
from typing import Any, TypeAlias
from urllib.parse import urljoin

from lxml import etree
from parsel import Selector
from parsel.csstranslator import HTMLTranslator
from w3lib.html import strip_html5_whitespace
from w3lib.url import canonicalize_url, safe_url_string

from skitter.http import Link, Response, url_host
from skitter.http.wiring import url_netloc
from skitter.linkextractors._extensions import IGNORED_EXTENSIONS

__all__ = ["LxmlLinkExtractor"]

Regex: TypeAlias = str | re.Pattern[str]
Regexes: TypeAlias = Regex | Iterable[Regex]

_XHTML = "{http://www.w3.org/1999/xhtml}"
_SCHEMES = ("http://", "https://", "file://", "ftp://")
_URL_CHARS = r"!$%&()*+,\-./0-9:;=?@A-Z_a-z~"  # printable ASCII it never escapes, but "#"
_PATH = re.compile(r"[^:/?#]+://[^/?#]*([^?#]*)")
_SAFE_URL = re.compile(
    # What safe_url_string returns unchanged (a property test holds it to that): http(s),
    # a lower-case host, a port that is not 0-padded, then path and query without a
    # character it escapes, an empty query or fragment it drops, or a second "#".
    rf"https?://[a-z0-9.\-]+(?::[1-9][0-9]{{0,3}})?"
    rf"(?:/[{_URL_CHARS}]*(?<!\?)(?:#[{_URL_CHARS}]+)?)?"
)
_string = etree.XPath("string()", smart_strings=False)  # plain str: storable, no tree ref
_css = HTMLTranslator()


def _names(value: str | Iterable[str] | None) -> tuple[str, ...]:
    if value is None:
        return ()
    if isinstance(value, str):
        return (value,)
    return tuple(value)


def _compile(value: Regexes | None) -> list[re.Pattern[str]]:
    if value is None:
        return []
    if isinstance(value, str | re.Pattern):
        value = [value]
    return [v if isinstance(v, re.Pattern) else re.compile(v) for v in value]


def _safe(url: str, encoding: str) -> str:
    """``safe_url_string(url, encoding)``, skipped for a URL it leaves as it is."""
    if _SAFE_URL.fullmatch(url):
        return url
    return safe_url_string(url, encoding=encoding)


def _path(url: str) -> str:
    """The path of an absolute URL, without query, fragment or last segment's
    ``;params`` (what ``urlparse`` calls the path)."""
    match = _PATH.match(url)
    if match is None:
        return ""
    path = match.group(1)
    if ";" in path:
        params = path.find(";", path.rfind("/"))
        if params >= 0:
            path = path[:params]
    return path


class _AnyOf:
    """Whether any of some regexes is found in a text (picklable, unlike a closure, so
    an extractor can be pickled as Scrapy's can)."""

    __slots__ = ("_one", "_patterns")

    def __init__(self, patterns: list[re.Pattern[str]]) -> None:
        self._patterns = patterns
        self._one = patterns[0] if len(patterns) == 1 else None

    def __call__(self, text: str) -> bool:
        if self._one is not None:
            return self._one.search(text) is not None
        return any(p.search(text) for p in self._patterns)

    def __getstate__(self) -> list[re.Pattern[str]]:
        return self._patterns

    def __setstate__(self, patterns: list[re.Pattern[str]]) -> None:
        self._patterns = patterns
        self._one = patterns[0] if len(patterns) == 1 else None


def _has_nofollow(rel: str | None) -> bool:
    return rel is not None and "nofollow" in rel.lower().replace(",", " ").split()


class LxmlLinkExtractor:
    """``extract_links(response)``: the ``Link`` objects of a page, in document order.

    The arguments are Scrapy's: ``allow``/``deny`` (regexes the absolute URL must /
    must not match; deny wins), ``allow_domains``/``deny_domains``, ``restrict_xpaths``
    and ``restrict_css`` (only links inside those regions), ``restrict_text`` (regexes
    the link text must match), ``tags``/``attrs`` (``"*"`` for every one) and
    ``deny_tags``/``deny_attrs``, ``canonicalize`` (w3lib's canonical URL),
    ``unique`` (drop repeats of a URL), ``process_value`` (rewrite each raw value, or
    return None to drop it), ``deny_extensions`` (default ``IGNORED_EXTENSIONS``) and
    ``strip`` (HTML5 whitespace around attribute values). Only http, https, file and
    ftp links are kept.
    """

    def __init__(
        self,
        allow: Regexes = (),
        deny: Regexes = (),
        allow_domains: str | Iterable[str] = (),
        deny_domains: str | Iterable[str] = (),
        restrict_xpaths: str | Iterable[str] = (),
        tags: str | Iterable[str] = ("a", "area"),
        attrs: str | Iterable[str] = ("href",),
        canonicalize: bool = False,
        unique: bool = True,
        process_value: Callable[[Any], Any] | None = None,
        deny_extensions: str | Iterable[str] | None = None,
        restrict_css: str | Iterable[str] = (),
        strip: bool = True,
        restrict_text: Regexes | None = None,
        deny_tags: str | Iterable[str] = (),
        deny_attrs: str | Iterable[str] = (),
    ) -> None:
        if process_value is not None and not callable(process_value):
            raise TypeError(f"process_value must be callable, got {process_value!r}")
        self.allow_res = _compile(allow)
        self.deny_res = _compile(deny)
        self.allow_domains = {d.lower() for d in _names(allow_domains)}
        self.deny_domains = {d.lower() for d in _names(deny_domains)}
        self.restrict_xpaths = _names(restrict_xpaths) + tuple(
            _css.css_to_xpath(css) for css in _names(restrict_css)
        )
        self.restrict_text = _compile(restrict_text)
        self.canonicalize = canonicalize
        self.unique = unique
        self.process_value = process_value
        self.strip = strip
        if deny_extensions is None:
            deny_extensions = IGNORED_EXTENSIONS
        self.deny_extensions = {"." + ext.lower() for ext in _names(deny_extensions)}
        self._deny_suffixes = tuple(self.deny_extensions)
        self._allow = _AnyOf(self.allow_res)
        self._deny = _AnyOf(self.deny_res)
        denied_tags, denied_attrs = set(_names(deny_tags)), set(_names(deny_attrs))
        wanted_tags = set(_names(tags))
        self._any_tag = "*" in wanted_tags
        self._tags = wanted_tags - denied_tags - {"*"}
        self._denied_tags = denied_tags
        wanted_attrs = set(_names(attrs))
        self._any_attr = "*" in wanted_attrs
        self._attrs = frozenset(wanted_attrs - denied_attrs - {"*"})
        self._denied_attrs = denied_attrs
        self._iter_tags = (*self._tags, *(_XHTML + tag for tag in self._tags))

    # -- extraction ----------------------------------------------------------------------
    def extract_links(self, response: Response) -> list[Link]:
        """The links of ``response`` that the rules keep, in document order, relative
        ones resolved against ``<base href>`` when the page has one."""
        if self.restrict_xpaths:
            regions: Iterable[Selector] = [
                region for xpath in self.restrict_xpaths for region in response.xpath(xpath)
            ]
        else:
            regions = [response.selector]
        links: list[Link] = []
        for region in regions:
            root = region.root
            if isinstance(root, str) or root is None:
                continue  # a text or attribute selection holds no elements
            links.extend(self._links_in(root, response))
        if self.unique:
            return _unique(links)
        return links

    def _links_in(self, root: Any, response: Response) -> list[Link]:
        encoding = response.encoding
        process = self.process_value
        join = response.urljoin
        strip = self.strip
        # As Scrapy's: with unique, a URL's first link in a region is the one judged.
        seen: set[str] | None = set() if self.unique else None
        links: list[Link] = []
        for element, value in self._values(root):
            if strip:
                value = strip_html5_whitespace(value)
            try:
                url = join(value)
            except ValueError:
                continue  # a malformed link (a bad IPv6 literal, say) is no link
            if process is not None:
                url = process(url)
                if url is None:
                    continue
            try:
                url = _safe(url, encoding)
                if process is not None:
                    url = urljoin(response.url, url)
            except ValueError:
                continue
            if seen is not None:
                if url in seen:
                    continue
                seen.add(url)
            text = _string(element) if len(element) else element.text  # a leaf: its text
            link = Link(url, text or "", nofollow=_has_nofollow(element.get("rel")))
            if self._link_allowed(link):
                if self.canonicalize:
                    link = Link(canonicalize_url(link.url), link.text, nofollow=link.nofollow)
                links.append(link)
        return links

    def _values(self, root: Any) -> Iterator[tuple[Any, str]]:
        """(element, attribute value) of every wanted attribute of every wanted tag."""
        if self._any_tag:
            elements = root.iter(etree.Element)
        elif self._tags:
            elements = root.iter(*self._iter_tags)
        else:
            return
        any_tag, denied_tags = self._any_tag, self._denied_tags
        any_attr, attrs, denied_attrs = self._any_attr, self._attrs, self._denied_attrs
        single = next(iter(attrs)) if len(attrs) == 1 and not any_attr else None
        for element in elements:
            if any_tag and denied_tags:
                tag = element.tag
                if isinstance(tag, str) and tag.rpartition("}")[2] in denied_tags:
                    continue
            if single is not None:
                value = element.get(single)
                if value is not None:
                    yield element, value
                continue
            for name, value in element.attrib.items():  # in the document's order
                if (any_attr and name not in denied_attrs) or name in attrs:
                    yield element, value

    # -- filtering -----------------------------------------------------------------------
    def _link_allowed(self, link: Link) -> bool:
        url = link.url
        if not url.startswith(_SCHEMES):
            return False
        if self.allow_res and not self._allow(url):
            return False
        if self.deny_res and self._deny(url):
            return False
        if self.allow_domains and not self._in_domains(url, self.allow_domains):
            return False
        if self.deny_domains and self._in_domains(url, self.deny_domains):
            return False
        if self._deny_suffixes and _path(url).lower().endswith(self._deny_suffixes):
            return False
        return not self.restrict_text or any(r.search(link.text) for r in self.restrict_text)

    @staticmethod
    def _in_domains(url: str, domains: set[str]) -> bool:
        host = url_host(url)
        if not host:
            return False
        netloc = url_netloc(url)
        for domain in domains:
            name = netloc if ":" in domain and not domain.startswith("[") else host
            if name == domain or name.endswith("." + domain):
                return True
        return False

    def matches(self, url: str) -> bool:
        """Whether ``url`` passes the domain and allow/deny rules (not the others)."""
        if self.allow_domains and not self._in_domains(url, self.allow_domains):
            return False
        if self.deny_domains and self._in_domains(url, self.deny_domains):
            return False
        if self.allow_res and not any(r.search(url) for r in self.allow_res):
            return False
        return not any(r.search(url) for r in self.deny_res)


def _unique(links: list[Link]) -> list[Link]:
    seen: set[str] = set()
    kept = []
    for link in links:
        if link.url not in seen:
            seen.add(link.url)
            kept.append(link)
    return kept
