"""BlockDetector: whether a response is a site's refusal of the crawler, not a page.

Sessions retire on a block and tiered proxies escalate on one, so both ask the same
question, answered here once per crawl's settings:

- a status in BLOCK_STATUSES (401, 403, 429) whose body holds one of BLOCK_MARKERS
  ("access denied", "banned", ...): a bare 403 is just as often a page the site keeps
  private, and retiring sessions over it would retry it for nothing; with BLOCK_MARKERS
  empty the status alone is a block;
- a body of any status holding one of CAPTCHA_MARKERS (a challenge page served as 200);
- the spider's own ``is_blocked(response)`` hook (plain or async) saying True. It is
  asked last, and only when the rules above found no block.

Markers are matched without regard to case in the first ``SCAN_BYTES`` of the body, as
bytes (UTF-8), so no page is decoded for it.
"""

from __future__ import annotations

import inspect
from collections.abc import Iterable
from typing import Any

from skitter.exceptions import ConfigError
from skitter.http import Response
from skitter.settings import SessionSettings, Settings

__all__ = ["SCAN_BYTES", "BlockDetector"]

#: How much of a body is searched for markers: a ban or CAPTCHA page says so early.
SCAN_BYTES = 64 * 1024


class BlockDetector:
    """``await detector(response)``: True when the site refused the crawler."""

    def __init__(
        self,
        statuses: Iterable[int],
        markers: Iterable[str],
        captcha_markers: Iterable[str],
        hook: Any = None,
    ) -> None:
        self.statuses = frozenset(int(s) for s in statuses)
        self.markers = tuple(_marker(m, "BLOCK_MARKERS") for m in markers)
        self.captcha_markers = tuple(_marker(m, "CAPTCHA_MARKERS") for m in captcha_markers)
        if hook is not None and not callable(hook):
            raise ConfigError(f"the spider's is_blocked must be callable, not {hook!r}")
        self._hook = hook

    @classmethod
    def from_settings(cls, settings: Settings, spider: Any) -> BlockDetector:
        own = settings.view(SessionSettings)
        return cls(
            own.block_statuses or (),
            own.block_markers or (),
            own.captcha_markers or (),
            getattr(spider, "is_blocked", None),
        )

    def reason(self, response: Response) -> str | None:
        """Why the settings' rules take ``response`` for a block, or None (the spider's
        hook is not asked here)."""
        status = response.status
        head: bytes | None = None
        if status in self.statuses:
            if not self.markers:
                return f"HTTP {status}"
            head = response.body[:SCAN_BYTES].lower()
            for marker in self.markers:
                if marker in head:
                    return f"HTTP {status} ({marker.decode()})"
        if self.captcha_markers:
            if head is None:
                head = response.body[:SCAN_BYTES].lower()
            for marker in self.captcha_markers:
                if marker in head:
                    return f"CAPTCHA ({marker.decode()})"
        return None

    async def __call__(self, response: Response) -> str | None:
        """Why ``response`` is a block (rules first, then the spider's hook), or None."""
        found = self.reason(response)
        if found is not None or self._hook is None:
            return found
        verdict = self._hook(response)
        if inspect.isawaitable(verdict):
            verdict = await verdict
        return "is_blocked" if verdict else None


def _marker(value: Any, name: str) -> bytes:
    if not isinstance(value, str) or not value:
        raise ConfigError(f"{name} holds texts, not {value!r}")
    return value.lower().encode()
