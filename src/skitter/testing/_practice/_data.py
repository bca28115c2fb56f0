"""The practice site's one data set: authors, quotes and tags, built from a fixed seed.

Every page, feed, sitemap and API answer the site serves is rendered from this model,
and every expected item set of the Scrapy corpus is computed from it, so the site and
the ground truth cannot drift apart. The model is immutable and built once per process.
"""

from __future__ import annotations

import functools
import random
import unicodedata
from dataclasses import dataclass
from datetime import date, timedelta

__all__ = ["PAGE_SIZE", "Author", "PracticeData", "Quote", "practice_data"]

SEED = 20251201
QUOTE_COUNT = 64
#: Quotes per list page, for the home pages, the tag pages and the JSON API alike.
PAGE_SIZE = 10
FIRST_ADDED = date(2024, 1, 6)

# Names with accents and a character outside Latin-1, so that decoding is exercised.
_AUTHORS = (
    ("Ada Quill", "March 3, 1815", "London, England"),
    ("Émile Fontaine", "July 21, 1840", "Lyon, France"),
    ("Zoë Marlowe", "November 9, 1902", "Bristol, England"),
    ("Björn Ásgeirsson", "January 30, 1871", "Reykjavík, Iceland"),
    ("Chidi Okafor", "May 12, 1934", "Enugu, Nigeria"),
    ("Mei Lin", "August 8, 1888", "Suzhou, China"),
    ("Rosa Caldeira", "February 14, 1911", "Porto, Portugal"),
    ("Tomás Herrera", "October 2, 1925", "Córdoba, Argentina"),
    ("Ingrid Solberg", "June 17, 1899", "Bergen, Norway"),
    ("Dmitri Volkov", "December 25, 1856", "Kazan, Russia"),
)
TAGS = (
    "love",
    "life",
    "humor",
    "books",
    "truth",
    "friendship",
    "hope",
    "time",
    "courage",
    "wisdom",
    "music",
    "travel",
)
_SUBJECTS = (
    "A good book",
    "The truth",
    "Every friend",
    "Hope",
    "Music",
    "A long road",
    "Courage",
    "Time",
    "Laughter",
    "The heart",
    "A quiet morning",
    "Tea & toast",
)
_VERBS = ("is", "becomes", "remains", "was never", "can be", "turns into")
_OBJECTS = (
    "the best teacher",
    "a map without edges",
    "a door left open",
    "worth the wait",
    "the shortest way home",
    'what we call "luck"',
    "a song, sung twice",
    "older than it looks",
    "the only honest clock",
    "lighter when shared",
    "a promise < a deed",
    "the start of everything",
)
_CLOSERS = ("", " Remember that.", " Or so they say.", " Nothing more, nothing less.")


@dataclass(frozen=True, slots=True)
class Author:
    name: str
    born_date: str
    born_location: str
    goodreads_id: int

    @property
    def slug(self) -> str:
        """The URL's name for the author, ASCII as quotes.toscrape.com's: ``Emile-Fontaine``."""
        folded = unicodedata.normalize("NFKD", self.name).encode("ascii", "ignore").decode()
        return folded.replace(" ", "-")

    @property
    def path(self) -> str:
        return f"/author/{self.slug}/"

    @property
    def description(self) -> str:
        return (
            f"{self.name} was born on {self.born_date} in {self.born_location} "
            "and wrote short sentences that people kept repeating."
        )

    @property
    def goodreads_link(self) -> str:
        return f"https://www.goodreads.com/author/show/{self.goodreads_id}.{self.slug}"


@dataclass(frozen=True, slots=True)
class Quote:
    id: int
    #: The quote as written, without the curly quotes the pages wrap it in.
    text: str
    author: Author
    tags: tuple[str, ...]
    #: When the quote was added: the sitemaps' ``lastmod`` and the feeds' dates.
    added: date

    @property
    def path(self) -> str:
        return f"/quote/{self.id}/"

    @property
    def shown(self) -> str:
        """The text as the HTML pages show it: “in curly quotes”."""
        return f"\u201c{self.text}\u201d"


@dataclass(frozen=True, slots=True)
class PracticeData:
    authors: tuple[Author, ...]
    quotes: tuple[Quote, ...]
    tags: tuple[str, ...]

    @property
    def page_count(self) -> int:
        return _pages(len(self.quotes))

    def page(self, number: int) -> tuple[Quote, ...]:
        """The quotes of list page ``number`` (from 1), as the home pages show them."""
        return _slice(self.quotes, number)

    def tagged(self, tag: str) -> tuple[Quote, ...]:
        return tuple(q for q in self.quotes if tag in q.tags)

    def tag_page_count(self, tag: str) -> int:
        return _pages(len(self.tagged(tag)))

    def tag_page(self, tag: str, number: int) -> tuple[Quote, ...]:
        return _slice(self.tagged(tag), number)

    def author(self, slug: str) -> Author | None:
        return next((a for a in self.authors if a.slug == slug), None)

    def author_named(self, name: str) -> Author | None:
        return next((a for a in self.authors if a.name == name), None)

    def by(self, author: Author) -> tuple[Quote, ...]:
        return tuple(q for q in self.quotes if q.author == author)

    def tags_of(self, author: Author) -> tuple[str, ...]:
        """The tags an author's quotes carry, sorted: the search form's second menu."""
        return tuple(sorted({tag for q in self.by(author) for tag in q.tags}))

    def quote(self, number: int) -> Quote | None:
        return self.quotes[number - 1] if 1 <= number <= len(self.quotes) else None

    def top_tags(self) -> tuple[str, ...]:
        """The ten most used tags, most used first (ties by name): the side bar."""
        counts = {tag: len(self.tagged(tag)) for tag in self.tags}
        return tuple(sorted(counts, key=lambda tag: (-counts[tag], tag))[:10])


def _pages(count: int) -> int:
    return max(1, -(-count // PAGE_SIZE))


def _slice(quotes: tuple[Quote, ...], number: int) -> tuple[Quote, ...]:
    return quotes[(number - 1) * PAGE_SIZE : number * PAGE_SIZE]


@functools.cache
def practice_data() -> PracticeData:
    """The data set; the same for every call, every process and every run."""
    rng = random.Random(SEED)
    authors = tuple(
        Author(name, born, place, 1000 + 37 * n) for n, (name, born, place) in enumerate(_AUTHORS)
    )
    quotes = []
    for n in range(1, QUOTE_COUNT + 1):
        text = (
            f"{rng.choice(_SUBJECTS)} {rng.choice(_VERBS)} {rng.choice(_OBJECTS)}."
            f"{rng.choice(_CLOSERS)}"
        )
        # Every fifteenth quote has no tag at all, as some of quotes.toscrape.com's.
        tags = () if n % 15 == 0 else tuple(rng.sample(TAGS, rng.randint(1, 3)))
        author = authors[(n * 7 + n // 10) % len(authors)]
        added = FIRST_ADDED + timedelta(days=11 * n)
        quotes.append(Quote(n, text, author, tags, added))
    return PracticeData(authors, tuple(quotes), TAGS)
