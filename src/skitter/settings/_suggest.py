"""Which known setting an unknown name was meant to be.

A near-exact spelling (``CONCURENT_REQUESTS``) is the easy case; the names people really
write are others': a word for a word (``DEPTH_MAX`` for ``DEPTH_LIMIT``, ``RETRY_COUNT``
for ``RETRY_TIMES``), a word short (``CLOSESPIDER_ITEMS``, ``TIMEOUT``, ``PROXY``), a
subsystem's bare name (``AUTOTHROTTLE``). So names are compared word by word (words are
the parts between ``_``): two words match when they are equal, one of a few synonyms,
one a prefix of the other (``DELAY``/``DELAYS``, ``ITEMS``/``ITEMCOUNT``) or a near
spelling (those count a little less than the same word). A candidate must match two
thirds of the name's words, be the name without its ``_`` (``USERAGENT``) or be spelt
nearly alike; among those, the best covers the most, is the subsystem's switch
(``AUTOTHROTTLE`` -> ``AUTOTHROTTLE_ENABLED``), adds the fewest words, belongs to the
larger family (``TIMEOUT`` -> ``DOWNLOAD_TIMEOUT``, not ``DNS_TIMEOUT``), and is spelt
the closest.
"""

from __future__ import annotations

import difflib
import functools
from collections import Counter
from collections.abc import Collection

__all__ = ["suggest"]

#: Words people write for the registry's word: ``DEPTH_MAX``, ``MAX_DEPTH`` -> ``DEPTH_LIMIT``;
#: ``RETRY_COUNT``, ``RETRY_RETRIES`` -> ``RETRY_TIMES``.
_SYNONYMS = {"MAX": "LIMIT", "MAXIMUM": "LIMIT", "COUNT": "TIMES", "RETRIES": "TIMES"}

#: How many alternatives are named after the best one, when they fit as well.
_ALTERNATIVES = 2


def _words(name: str) -> list[str]:
    return [word for word in name.upper().split("_") if word]


@functools.lru_cache(maxsize=4096)
def _match(word: str, other: str) -> float:
    """1 for the same word (or a synonym), 0.9 for a prefix or a near spelling, else 0."""
    if word == other or _SYNONYMS.get(word) == other or _SYNONYMS.get(other) == word:
        return 1.0
    shorter = min(len(word), len(other))
    if shorter < 4:
        return 0.0
    pairs = zip(word, other, strict=False)
    prefix = next((n for n, (a, b) in enumerate(pairs) if a != b), shorter)
    if prefix == shorter or prefix >= max(4, shorter - 1):
        return 0.9  # DELAY/DELAYS, HTTP/HTTPCACHE, ITEMS/ITEMCOUNT
    spelling = difflib.SequenceMatcher(None, word, other)  # the quick upper bounds first
    near = spelling.real_quick_ratio() >= 0.8 and spelling.quick_ratio() >= 0.8
    return 0.9 if near and spelling.ratio() >= 0.8 else 0.0


def _rank(name: str, candidate: str, families: Counter[str]) -> tuple[float, ...] | None:
    """How well ``candidate`` fits ``name`` (higher is better), or None if it does not."""
    words, theirs = _words(name), _words(candidate)
    if not words or not theirs:
        return None
    matches = [[_match(word, other) for other in theirs] for word in words]
    share = sum(max(row) for row in matches) / len(words)
    used = sum(any(column) for column in zip(*matches, strict=True))
    joined = name.replace("_", "") == candidate.replace("_", "")  # USERAGENT
    matcher = difflib.SequenceMatcher(None, name, candidate)
    if not (joined or share >= 2 / 3 or matcher.real_quick_ratio() >= 0.88):
        return None  # the quick bounds first: most candidates stop here
    spelling = matcher.ratio()
    if not (joined or share >= 2 / 3 or spelling >= 0.88):
        return None
    switch = float(candidate == f"{name}_ENABLED")  # AUTOTHROTTLE: the subsystem's switch
    return (float(joined), share, switch, -(len(theirs) - used), families[theirs[0]], spelling)


def suggest(name: str, known: Collection[str]) -> list[str]:
    """The names of ``known`` that ``name`` was most likely meant to be, best first:
    the best, and up to two more that fit as well (the same words covered and added)."""
    families = Counter(_words(candidate)[0] for candidate in known if _words(candidate))
    ranked = sorted(
        (
            (rank, candidate)
            for candidate in known
            if (rank := _rank(name, candidate, families)) is not None
        ),
        reverse=True,
    )
    if not ranked:
        return []
    best = ranked[0][0][:4]  # alternatives: as good on all but family and spelling
    return [candidate for rank, candidate in ranked[: 1 + _ALTERNATIVES] if rank[:4] == best]
