"""A link found in a page, as a link extractor reports it (Scrapy's ``Link``)."""

from __future__ import annotations

from dataclasses import dataclass

__all__ = ["Link"]


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
