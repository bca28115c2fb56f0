"""Scrapy's module path for the extractor, ``skitter.linkextractors.lxmlhtml``, and
its low-level parser: every link of one tag and attribute, with no rule applied."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from typing import Any

from lxml import etree
from w3lib.url import canonicalize_url

from skitter.http import Link, Response
from skitter.linkextractors._lxml import LxmlLinkExtractor

__all__ = ["LxmlLinkExtractor", "LxmlParserLinkExtractor"]

NameTest = str | Callable[[str], bool]


def _test(name: NameTest) -> Callable[[str], bool]:
    return name if callable(name) else name.__eq__


class LxmlParserLinkExtractor(LxmlLinkExtractor):
    """The links of every ``tag`` element's ``attr`` (each a name or a predicate on
    names), resolved, passed through ``process`` and kept whatever their scheme or
    extension: LxmlLinkExtractor's rules are the caller's to apply. With ``unique``, a
    URL seen before is dropped, compared canonicalized unless ``canonicalized`` says
    the URLs are canonical already."""

    def __init__(
        self,
        tag: NameTest = "a",
        attr: NameTest = "href",
        process: Callable[[Any], Any] | None = None,
        unique: bool = False,
        strip: bool = True,
        canonicalized: bool = False,
    ) -> None:
        super().__init__(
            tags="*",
            attrs="*",
            unique=False,
            process_value=process,
            deny_extensions=(),
            strip=strip,
        )
        self.scan_tag = _test(tag)
        self.scan_attr = _test(attr)
        self.link_key: Callable[[str], str] = (
            (lambda url: url) if canonicalized else canonicalize_url
        )
        self._unique_links = unique

    def extract_links(self, response: Response) -> list[Link]:
        links = super().extract_links(response)
        if not self._unique_links:
            return links
        seen: set[str] = set()
        kept = []
        for link in links:
            key = self.link_key(link.url)
            if key not in seen:
                seen.add(key)
                kept.append(link)
        return kept

    def _values(self, root: Any) -> Iterator[tuple[Any, str]]:
        for element in root.iter(etree.Element):
            if not self.scan_tag(element.tag.rpartition("}")[2]):
                continue
            for name, value in element.attrib.items():
                if self.scan_attr(name):
                    yield element, value

    def _link_allowed(self, link: Link) -> bool:
        return True
