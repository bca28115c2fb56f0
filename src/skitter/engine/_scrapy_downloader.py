"""Scrapy's ``crawler.engine.downloader``: the download slots and middlewares, read.

skitter splits what Scrapy's downloader does: the scheduler keeps the slots (politeness:
``SlotQueues``, keyed by ``slot_of``) and the downloader runs the middleware onion.
Plug-ins reach for Scrapy's object anyway: scrapy-splash keys its requests' download
slot with ``_get_slot_key``, scrapy-poet finds its middleware in
``middleware.middlewares``. ``ScrapyDownloader`` answers those from the running crawl's
scheduler and downloader (``crawler.engine.downloader``), or, built from a crawler by
Scrapy's ``Downloader(crawler)`` (``skitter.core.downloader``), from its settings alone.

What it cannot do is refused, not ignored: the middleware chain is built once, so
assigning ``middleware.middlewares`` fails; a live slot is a snapshot of the
scheduler's, so setting its ``delay`` or ``concurrency`` (which would change nothing)
fails with what to set instead.
"""

from __future__ import annotations

import random
import warnings
from collections import deque
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from skitter.exceptions import ScrapyDeprecationWarning
from skitter.http import Request
from skitter.scheduler import SlotPolicies, SlotPolicy, slot_by, slot_key_function

if TYPE_CHECKING:
    from skitter.engine._project import Project

__all__ = ["EngineDownloader", "ScrapyDownloader", "Slot"]

_LIVE_SETTING = (
    "a slot of the running crawl is the scheduler's, read here: set DOWNLOAD_SLOTS "
    "(per slot) or DOWNLOAD_DELAY / CONCURRENT_REQUESTS_PER_DOMAIN, or enable AutoThrottle"
)
_LIVE_QUEUE = (
    "the requests of a running crawl's slot are in skitter's scheduler, not in the "
    "slot: read its in_flight and queued counts"
)
_MW_FROZEN = (
    "the downloader middlewares are built once, at start: list them in "
    "DOWNLOADER_MIDDLEWARES (None switches a built-in off) instead of changing the chain"
)


class Slot:
    """Scrapy's download slot: one key's ``concurrency``, ``delay`` (seconds between two
    downloads) and ``randomize_delay``. Built by hand (or by a stand-alone downloader)
    it also keeps Scrapy's ``active``, ``queue`` and ``transferring`` containers; a slot
    of the running crawl (``live``) has ``in_flight`` and ``queued`` counts instead."""

    def __init__(
        self,
        concurrency: int,
        delay: float,
        randomize_delay: bool,
        *,
        throttle: bool | None = None,
    ) -> None:
        self._concurrency = concurrency
        self._delay = delay
        self.randomize_delay = randomize_delay
        self.throttle = throttle
        self.live = False
        self.in_flight = 0
        self.queued = 0
        self.lastseen = 0.0
        self._active: set[Request] = set()
        self._queue: deque[Any] = deque()
        self._transferring: set[Request] = set()

    @classmethod
    def _snapshot(cls, policy: SlotPolicy, delay: float, in_flight: int, queued: int) -> Slot:
        slot = cls(policy.concurrency, delay, policy.randomize_delay, throttle=policy.throttle)
        slot.live, slot.in_flight, slot.queued = True, in_flight, queued
        return slot

    @property
    def concurrency(self) -> int:
        return self._concurrency

    @concurrency.setter
    def concurrency(self, value: int) -> None:
        self._refuse_live(_LIVE_SETTING)
        self._concurrency = value

    @property
    def delay(self) -> float:
        return self._delay

    @delay.setter
    def delay(self, value: float) -> None:
        self._refuse_live(_LIVE_SETTING)
        self._delay = value

    @property
    def active(self) -> set[Request]:
        self._refuse_live(_LIVE_QUEUE)
        return self._active

    @property
    def queue(self) -> deque[Any]:
        self._refuse_live(_LIVE_QUEUE)
        return self._queue

    @property
    def transferring(self) -> set[Request]:
        self._refuse_live(_LIVE_QUEUE)
        return self._transferring

    def _refuse_live(self, why: str) -> None:
        if self.live:
            raise AttributeError(why)

    def free_transfer_slots(self) -> int:
        """Downloads this slot may still start."""
        busy = self.in_flight if self.live else len(self._transferring)
        return self._concurrency - busy

    def download_delay(self) -> float:
        """The delay before the next download: 0.5x-1.5x ``delay`` when randomized."""
        if self.randomize_delay:
            return random.uniform(0.5 * self._delay, 1.5 * self._delay)
        return self._delay

    def close(self) -> None:
        """Nothing to close: the slot holds no timer of its own."""

    def __repr__(self) -> str:
        return (
            f"{type(self).__name__}(concurrency={self._concurrency!r}, "
            f"delay={self._delay!r}, randomize_delay={self.randomize_delay!r})"
        )


class _MiddlewareFace:
    """Scrapy's ``downloader.middleware``: the built chain, outermost first."""

    def __init__(self, middlewares: Callable[[], list[Any]]) -> None:
        self._middlewares = middlewares

    @property
    def middlewares(self) -> tuple[Any, ...]:
        return tuple(self._middlewares())

    @middlewares.setter
    def middlewares(self, value: Any) -> None:
        raise AttributeError(_MW_FROZEN)

    @property
    def methods(self) -> dict[str, list[Callable[..., Any]]]:
        """The hooks of each kind, in the order they run (a copy: changing it changes
        nothing, so it is rebuilt on each read)."""
        chain = self._middlewares()
        out: dict[str, list[Callable[..., Any]]] = {}
        for name, order in (
            ("process_request", chain),
            ("process_response", chain[::-1]),
            ("process_exception", chain[::-1]),
        ):
            out[name] = [hook for mw in order if (hook := getattr(mw, name, None)) is not None]
        return out


class ScrapyDownloader:
    """Scrapy's ``Downloader`` API over a crawl: slot keys, slots and middlewares."""

    def __init__(self, crawler: Any) -> None:
        """A stand-alone downloader for ``crawler``'s settings (Scrapy's
        ``Downloader(crawler)``): its slots are its own, made on first ask."""
        self.settings = crawler.settings
        self._policies = SlotPolicies.from_settings(self.settings)
        self._slot_of = slot_key_function(slot_by(self.settings))
        self._project: Project | None = None
        self._slots: dict[str, Slot] = {}
        self.middleware = _MiddlewareFace(self._no_chain)

    @classmethod
    def of(cls, project: Project) -> ScrapyDownloader:
        """The running crawl's downloader, read from ``project``'s scheduler and
        downloader: the slot keys are the scheduler's, the slots its live ones."""
        self = cls.__new__(cls)
        self.settings = project.settings
        self._policies = project.scheduler.slots.policies
        self._slot_of = project.scheduler.slot_of
        self._project = project
        self._slots = {}
        self.middleware = _MiddlewareFace(lambda: project.downloader.middlewares)
        return self

    @staticmethod
    def _no_chain() -> list[Any]:
        raise AttributeError(
            "a downloader built from a crawler has no middlewares: the running crawl's "
            "are crawler.engine.downloader.middleware.middlewares"
        )

    # -- slots ----------------------------------------------------------------------------
    def get_slot_key(self, request: Request) -> str:
        """The slot ``request`` goes to: ``meta["download_slot"]``, else its host (or
        what DOWNLOAD_SLOT_BY says), as the scheduler keys it."""
        return self._slot_of(request)

    def _get_slot_key(self, request: Request, spider: Any = None) -> str:
        """Scrapy's older name of ``get_slot_key`` (plug-ins call it with a spider)."""
        return self._slot_of(request)

    def _get_slot(self, request: Request, spider: Any = None) -> tuple[str, Slot]:
        """``request``'s slot key and slot (made from the policies when not live)."""
        if spider is not None:
            warnings.warn(
                "Passing a 'spider' argument to Downloader._get_slot() is deprecated",
                ScrapyDeprecationWarning,
                stacklevel=2,
            )
        key = self._slot_of(request)
        slot = self.slots.get(key)
        if slot is None:
            policy = self._policies[key]
            slot = Slot(
                policy.concurrency, policy.delay, policy.randomize_delay, throttle=policy.throttle
            )
            if self._project is None:
                self._slots[key] = slot
        return key, slot

    @property
    def slots(self) -> dict[str, Slot]:
        """The slots by key: for the running crawl, a snapshot of the scheduler's live
        slots (delay as in force now, AutoThrottle's included)."""
        if self._project is None:
            return self._slots
        live = self._project.scheduler.slots.stats()
        return {
            key: Slot._snapshot(self._policies[key], one.delay, one.in_flight, one.queued)
            for key, one in live.items()
        }

    def needs_backout(self) -> bool:
        """Whether the slots are full (the scheduler hands out nothing more then)."""
        slots = self.slots
        return bool(slots) and all(slot.free_transfer_slots() <= 0 for slot in slots.values())

    def close(self) -> None:
        """Nothing to close: the running crawl's downloader is closed by the crawl."""


class EngineDownloader:
    """``engine.downloader``: the ``ScrapyDownloader`` of the one spider the engine runs,
    made on first read. Refused when the engine runs several spiders: they share no
    downloader, and answering with one of them would mislead the others' plug-ins."""

    def __set_name__(self, owner: type, name: str) -> None:
        self._name = name

    def __get__(self, engine: Any, owner: type | None = None) -> Any:
        if engine is None:
            return self
        projects: list[Project] = engine.projects
        if len(projects) != 1:
            names = ", ".join(repr(project.name) for project in projects)
            raise AttributeError(
                f"engine.downloader is one spider's, and this engine runs {names}: "
                "run the crawler that needs it on an engine of its own"
            )
        made = ScrapyDownloader.of(projects[0])
        engine.__dict__[self._name] = made  # later reads skip the descriptor
        return made
