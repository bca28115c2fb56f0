"""Item validation: every item checked against the schemas of its type (``_schemas``).

``ItemValidationPipeline`` runs after the project's pipelines and before the feeds (the
manager puts it there when VALIDATION_SCHEMAS is set, unless ITEM_PIPELINES places it
itself), so it judges what would be written. Each failure is counted per field and rule
(``validation/errors/<field>/<rule>``), with ``validation/items`` (checked),
``validation/items/invalid`` and the total ``validation/errors``. An invalid item is
never passed over in silence; VALIDATION_INVALID says what becomes of it:

- ``drop``: it stops here, as any dropped item (``item_dropped_count``, a WARNING line
  naming its errors);
- ``keep``: it goes on to the feeds, counted (``validation/items/kept``);
- ``feed``: it goes to VALIDATION_INVALID_FEED, and to no other feed
  (``validation/items/routed``): the manager writes it there.

The first VALIDATION_SAMPLES invalid items are kept with their errors for the run
report, and the pipeline logs a summary when the crawl ends. Spidermon's
``ItemValidationPipeline`` path, in ITEM_PIPELINES, is ``SpidermonValidationPipeline``:
the same, with SPIDERMON_VALIDATION_SCHEMAS and Spidermon's keep-unless-
SPIDERMON_VALIDATION_DROP_ITEMS_WITH_ERRORS.
"""

from __future__ import annotations

import logging
from collections import Counter
from collections.abc import Iterable, Mapping
from typing import Any

from skitter._types import CrawlContext, StatsSink
from skitter.exceptions import ConfigError, DropItem
from skitter.items import item_to_dict
from skitter.pipelines._feed_options import parse_feeds
from skitter.pipelines._feeds import FeedExporter
from skitter.pipelines._schemas import Schema, read_schemas
from skitter.settings import FeedSettings, ItemSettings, Settings, SpidermonSettings

__all__ = [
    "InvalidItem",
    "ItemValidationPipeline",
    "SpidermonValidationPipeline",
    "build_invalid_feed",
    "validation_pipelines",
    "validator_of",
]

log = logging.getLogger("skitter.validation")

MODES = ("drop", "keep", "feed")


class InvalidItem(DropItem):
    """An item its schemas refuse; ``errors`` are its (field, rule) pairs, ``routed``
    whether it goes to the feed of invalid items rather than nowhere."""

    def __init__(self, errors: list[tuple[str, str]], *, routed: bool = False) -> None:
        shown = ", ".join(f"{field}: {rule}" for field, rule in errors[:5])
        more = f" (+{len(errors) - 5})" if len(errors) > 5 else ""
        super().__init__(f"invalid item ({shown}{more})")
        self.errors = errors
        self.routed = routed


class ItemValidationPipeline:
    """Checks each item against the schemas of its class (and those for every item)."""

    #: The setting the schemas are read from, and the one its mode is read from.
    schemas_setting = "VALIDATION_SCHEMAS"

    def __init__(
        self,
        schemas: dict[type | str, list[Schema]],
        *,
        mode: str = "drop",
        stats: StatsSink,
        samples: int = 10,
    ) -> None:
        if mode not in MODES:
            raise ConfigError(f"VALIDATION_INVALID must be one of {', '.join(MODES)}, not {mode!r}")
        self._schemas = schemas
        self.mode = mode
        self._stats = stats
        self._max_samples = max(0, samples)
        #: The first invalid items, as {"type", "item", "errors"}, for the run report.
        self.samples: list[dict[str, Any]] = []
        self._by_class: dict[type, list[Schema]] = {}
        self._checked = 0
        self._invalid = 0
        self._errors: Counter[str] = Counter()
        #: The feed invalid items go to (VALIDATION_INVALID = 'feed'): the manager opens
        #: and closes it with the other feeds; only this pipeline writes to it.
        self.feed: FeedExporter | None = None

    @classmethod
    def from_crawler(cls, crawler: CrawlContext) -> ItemValidationPipeline:
        settings = crawler.settings
        schemas = read_schemas(settings[cls.schemas_setting], cls.schemas_setting)
        if not schemas:
            raise ConfigError(
                f"{cls.__name__} is in ITEM_PIPELINES, but {cls.schemas_setting} is empty"
            )
        pipeline = cls(
            schemas,
            mode=cls._mode(settings),
            stats=crawler.stats,
            samples=settings.view(ItemSettings).validation_samples,
        )
        if pipeline.mode == "feed":
            pipeline.feed = build_invalid_feed(crawler)
        return pipeline

    @classmethod
    def _mode(cls, settings: Settings) -> str:
        return str(settings.view(ItemSettings).validation_invalid)

    def _schemas_of(self, kind: type) -> list[Schema]:
        found = self._by_class.get(kind)
        if found is None:
            found = [s for k in kind.__mro__ for s in self._schemas.get(k, ())]
            found += self._schemas.get("*", [])
            self._by_class[kind] = found
        return found

    def process_item(self, item: Any, spider: Any) -> Any:
        schemas = self._schemas_of(item.__class__)
        if not schemas:
            return item
        data = item_to_dict(item)
        errors = [error for schema in schemas for error in schema.errors(data)]
        stats = self._stats
        stats.inc("validation/items")
        self._checked += 1
        if not errors:
            return item
        self._invalid += 1
        stats.inc("validation/items/invalid")
        for field, rule in dict.fromkeys(errors):
            stats.inc("validation/errors")
            stats.inc(f"validation/errors/{field}/{rule}")
            self._errors[f"{field}: {rule}"] += 1
        if len(self.samples) < self._max_samples:
            self.samples.append(
                {
                    "type": item.__class__.__name__,
                    "item": data,
                    "errors": [{"field": f, "rule": r} for f, r in errors],
                }
            )
        if self.mode == "keep":
            stats.inc("validation/items/kept")
            return item
        if self.feed is not None:
            stats.inc("validation/items/routed")
            self.feed.process_item(item, spider)  # a FatalError fails the crawl, as a feed's
        raise InvalidItem(errors, routed=self.feed is not None)

    def close_spider(self, spider: Any) -> None:
        if not self._invalid:
            return
        what = {
            "drop": "dropped",
            "keep": "kept in the feeds",
            "feed": "written to VALIDATION_INVALID_FEED",
        }[self.mode]
        common = ", ".join(f"{name} x{n}" for name, n in self._errors.most_common(5))
        log.warning(
            "Validation: %d of %d items were invalid (%s): %s",
            self._invalid, self._checked, what, common,
        )  # fmt: skip


class SpidermonValidationPipeline(ItemValidationPipeline):
    """Spidermon's ``ItemValidationPipeline`` (its path in ITEM_PIPELINES): JSON Schemas
    from SPIDERMON_VALIDATION_SCHEMAS; invalid items kept unless
    SPIDERMON_VALIDATION_DROP_ITEMS_WITH_ERRORS, as Spidermon does."""

    schemas_setting = "SPIDERMON_VALIDATION_SCHEMAS"

    @classmethod
    def _mode(cls, settings: Settings) -> str:
        drop = settings.view(SpidermonSettings).spidermon_validation_drop_items_with_errors
        return "drop" if drop else "keep"


def validator_of(pipelines: Iterable[Any]) -> ItemValidationPipeline | None:
    """The item validation pipeline among ``pipelines``, if the crawl validates items."""
    return next((p for p in pipelines if isinstance(p, ItemValidationPipeline)), None)


def validation_pipelines(pipelines: list[Any], crawler: CrawlContext) -> list[Any]:
    """ITEM_PIPELINES' pipelines with item validation after them, when VALIDATION_SCHEMAS
    is set and they do not place it themselves. SPIDERMON_VALIDATION_SCHEMAS is read only
    by Spidermon's pipeline, so without that pipeline it would do nothing: refused."""
    own = crawler.settings.view(ItemSettings)
    kinds = {type(p) for p in pipelines}
    if (
        crawler.settings.view(SpidermonSettings).spidermon_validation_schemas
        and SpidermonValidationPipeline not in kinds
    ):
        raise ConfigError(
            "SPIDERMON_VALIDATION_SCHEMAS is read by Spidermon's ItemValidationPipeline, which "
            "ITEM_PIPELINES does not have: add 'spidermon.contrib.scrapy.pipelines."
            "ItemValidationPipeline' to it, or use VALIDATION_SCHEMAS"
        )
    if own.validation_schemas and SpidermonValidationPipeline in kinds:
        raise ConfigError(
            "VALIDATION_SCHEMAS and Spidermon's ItemValidationPipeline would check every item "
            "twice: keep one (SPIDERMON_VALIDATION_SCHEMAS, or VALIDATION_SCHEMAS alone)"
        )
    if own.validation_schemas and ItemValidationPipeline not in kinds:
        return [*pipelines, ItemValidationPipeline.from_crawler(crawler)]
    return pipelines


def build_invalid_feed(crawler: CrawlContext) -> FeedExporter:
    """The feed of invalid items (VALIDATION_INVALID = 'feed'), from
    VALIDATION_INVALID_FEED: a URI or {uri: FEEDS options}."""
    settings = crawler.settings
    target = settings.view(ItemSettings).validation_invalid_feed
    if not target:
        raise ConfigError(
            "VALIDATION_INVALID = 'feed' needs VALIDATION_INVALID_FEED (e.g. 'invalid.jsonl')"
        )
    entry = dict(target) if isinstance(target, Mapping) else {str(target): {}}
    if len(entry) != 1:
        raise ConfigError("VALIDATION_INVALID_FEED names one feed: a URI or {uri: options}")
    spider = getattr(crawler, "spider", None)
    try:
        (options,) = parse_feeds(
            entry,
            spider_name=str(getattr(spider, "name", "") or ""),
            settings=settings,
            spider=spider,
        )
    except ConfigError as exc:
        raise ConfigError(f"VALIDATION_INVALID_FEED: {exc}") from None
    if any(options.uri == str(uri) for uri in settings.view(FeedSettings).feeds):
        raise ConfigError(
            f"VALIDATION_INVALID_FEED {options.uri!r} is also in FEEDS: invalid items need a "
            "feed of their own"
        )
    return FeedExporter(
        options,
        stats=crawler.stats,
        clock=getattr(crawler, "clock", None),
        settings=settings,
        spider=spider,
    )
