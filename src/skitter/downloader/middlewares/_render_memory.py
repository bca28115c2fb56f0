"""What ``render="auto"`` has learned: which URL patterns need the browser.

Sans-I/O and synchronous (no clock: it counts pages, not seconds), so the rules below
can be tested without a crawl. ``url_pattern`` names a page type; ``RenderMemory``
keeps, per pattern, how many pages in a row needed rendering.

**Patterns.** The host (with its port) and the path, each path segment that looks like
a variable generalised: a segment holding a digit (``42``, ``item-42``, a hex id, a
UUID, a date) becomes ``{id}``, a run of 16 or more hex letters without digits ``{id}``
too, and a slug of three or more words joined by ``-`` or ``_``
(``blue-cotton-shirt``) becomes ``{slug}``. The scheme, the query and the fragment
are left out. So ``/product/42`` and ``/product/7`` are one pattern, ``/product`` and
``/category/shoes`` are others.

**Learning.** A pattern goes straight to the browser once ``learn`` of its pages in a
row needed rendering; one page that was fine over HTTP sets it back to HTTP first. A
pattern whose pages were always fine stays HTTP first. **Drift:** with ``recheck`` N,
every Nth page of a learned pattern is tried over HTTP first again, so a site that
stops needing JavaScript is noticed (0: never). **Bounds:** at most ``size`` patterns
are kept, the least recently used forgotten first.
"""

from __future__ import annotations

import re
from collections import OrderedDict

from yarl import URL

__all__ = ["RenderMemory", "url_pattern"]

_DIGIT = re.compile(r"\d")
_HEX_RUN = re.compile(r"[0-9a-fA-F]{16,}")
_WORD_SEP = re.compile(r"[-_]")


def _generalised(segment: str) -> str:
    if _DIGIT.search(segment) or _HEX_RUN.fullmatch(segment):
        return "{id}"
    if len(_WORD_SEP.split(segment)) >= 3:
        return "{slug}"
    return segment


def url_pattern(url: URL) -> str:
    """The page type of ``url``: host, port and generalised path (see the module)."""
    host = url.raw_host or ""
    port = url.explicit_port
    path = "/".join(_generalised(segment) for segment in url.raw_path.split("/"))
    return f"{host}:{port}{path}" if port is not None else f"{host}{path}"


class _Pattern:
    __slots__ = ("browser", "since_check", "streak")

    def __init__(self) -> None:
        self.streak = 0  # pages in a row that needed rendering
        self.browser = False  # learned: go straight to the browser
        self.since_check = 0  # pages sent straight since the last HTTP try


class RenderMemory:
    """Per URL pattern: does it go straight to the browser? (rules in the module)"""

    def __init__(self, *, learn: int, recheck: int, size: int) -> None:
        if learn < 1:
            raise ValueError(f"BROWSER_RENDER_AUTO_LEARN must be 1 or more, got {learn}")
        if recheck < 0:
            raise ValueError(f"BROWSER_RENDER_AUTO_RECHECK must be 0 or more, got {recheck}")
        if size < 1:
            raise ValueError(f"BROWSER_RENDER_AUTO_PATTERNS must be 1 or more, got {size}")
        self._learn = learn
        self._recheck = recheck
        self._size = size
        self._patterns: OrderedDict[str, _Pattern] = OrderedDict()

    def __len__(self) -> int:
        return len(self._patterns)

    def _get(self, pattern: str) -> _Pattern:
        patterns = self._patterns
        state = patterns.get(pattern)
        if state is None:
            state = patterns[pattern] = _Pattern()
            if len(patterns) > self._size:
                patterns.popitem(last=False)
        else:
            patterns.move_to_end(pattern)
        return state

    def straight_to_browser(self, pattern: str) -> bool:
        """Whether the next page of ``pattern`` skips HTTP (counts it, for the re-check)."""
        state = self._patterns.get(pattern)
        if state is None or not state.browser:
            return False
        self._patterns.move_to_end(pattern)
        state.since_check += 1
        if self._recheck and state.since_check >= self._recheck:
            state.since_check = 0
            return False
        return True

    def observe(self, pattern: str, *, needed: bool) -> bool:
        """Record whether a page of ``pattern`` fetched over HTTP needed rendering; True
        when this observation taught that the pattern goes straight to the browser."""
        state = self._get(pattern)
        if not needed:
            state.streak = 0
            state.browser = False
            return False
        state.streak += 1
        if state.browser or state.streak < self._learn:
            return False
        state.browser = True
        state.since_check = 0
        return True

    def learned(self, pattern: str) -> bool:
        """Whether ``pattern`` goes straight to the browser now."""
        state = self._patterns.get(pattern)
        return state is not None and state.browser
