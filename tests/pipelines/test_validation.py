"""Item validation (VALIDATION_SCHEMAS): counts that match a hand count, per field and
rule, for JSON Schema, pydantic and Item Fields; invalid items dropped, kept or routed
to a feed of their own, never silently; every bad configuration refused at start."""

from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest
from pydantic import BaseModel
from pydantic import Field as ModelField

from skitter import ConfigError, Crawler, Spider
from skitter.item import Field, Item
from skitter.pipelines._validation import validator_of

PRODUCT_SCHEMA = {
    "$schema": "https://json-schema.org/draft/2020-12/schema",
    "type": "object",
    "required": ["name", "price"],
    "properties": {
        "name": {"type": "string"},
        "price": {"type": "number", "minimum": 0},
        "offers": {"type": "array", "items": {"type": "object", "required": ["seller"]}},
    },
}


class Review(Item):
    """Checked by its own Fields."""

    author = Field(required=True, type=str)
    stars = Field(type=int)
    text = Field()


class Store(BaseModel):
    """A pydantic model the Store items (dicts keyed by class below) are checked with."""

    city: str
    employees: int = ModelField(ge=1)


@dataclass
class StoreItem:
    """A dataclass item, checked with the pydantic model."""

    city: Any = None
    employees: Any = None


ITEMS: list[Any] = [
    # dicts against PRODUCT_SCHEMA
    {"name": "a", "price": 1.5},  # valid
    {"name": "b"},  # price: required
    {"price": 2},  # name: required
    {"name": "d", "price": "cheap"},  # price: type
    {"name": "e", "price": -1},  # price: minimum
    {"name": "f", "price": 3, "offers": [{"seller": "x"}, {}, {}]},  # offers[].seller once
    {"name": "g", "price": None},  # price: type (null is not a number)
    # Items against their Fields
    Review(author="ann", stars=5),  # valid
    Review(stars=4),  # author: required
    Review(author="", stars="five"),  # author: required, stars: type
    Review(author="bob", text="ok"),  # valid (stars not set: only type-checked when set)
    # StoreItems against the pydantic model
    StoreItem(city="Oslo", employees=3),  # valid
    StoreItem(city="Bergen", employees=0),  # employees: greater_than_equal
    StoreItem(employees="many"),  # city: string_type (None), employees: int_parsing
]

#: By hand, from the comments above: (field, rule) -> items with that error.
HAND_COUNT = {
    "price/required": 1,
    "name/required": 1,
    "price/type": 2,
    "price/minimum": 1,
    "offers[].seller/required": 1,
    "author/required": 2,
    "stars/type": 1,
    "employees/greater_than_equal": 1,
    "city/string_type": 1,
    "employees/int_parsing": 1,
}
INVALID = 10


class Yields(Spider):
    name = "yields"

    async def start(self) -> Any:
        for item in ITEMS:
            yield item


def schemas() -> dict[Any, Any]:
    return {dict: PRODUCT_SCHEMA, Review: "fields", StoreItem: Store}


async def run(tmp_path: Path, **settings: Any) -> tuple[Crawler, list[Any]]:
    feed = tmp_path / "items.jsonl"
    crawler = Crawler(
        Yields,
        {"FEEDS": {str(feed): {"format": "jsonl"}}, "VALIDATION_SCHEMAS": schemas(), **settings},
    )
    await crawler.run()
    lines = feed.read_text().splitlines() if feed.exists() else []
    return crawler, [json.loads(line) for line in lines]


def validation_stats(crawler: Crawler) -> dict[str, Any]:
    return {k: v for k, v in crawler.stats.to_dict().items() if k.startswith("validation/")}


async def test_counts_match_a_hand_count(tmp_path: Path) -> None:
    crawler, written = await run(tmp_path, VALIDATION_INVALID="keep")
    stats = validation_stats(crawler)
    per_rule = {
        key.removeprefix("validation/errors/"): value
        for key, value in stats.items()
        if key.startswith("validation/errors/")
    }
    assert per_rule == HAND_COUNT
    assert stats["validation/errors"] == sum(HAND_COUNT.values())
    assert stats["validation/items"] == len(ITEMS)
    assert stats["validation/items/invalid"] == INVALID
    assert stats["validation/items/kept"] == INVALID
    assert len(written) == len(ITEMS)  # kept: in the feed, counted


async def test_invalid_items_are_dropped_by_default_with_a_warning(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    crawler, written = await run(tmp_path)
    stats = crawler.stats.to_dict()
    assert len(written) == len(ITEMS) - INVALID
    assert stats["item_dropped_count"] == INVALID
    assert stats["item_dropped_reasons_count/InvalidItem"] == INVALID
    assert stats["item_scraped_count"] == len(ITEMS) - INVALID
    assert "Dropped: invalid item (price: required)" in caplog.text
    assert "Validation: 10 of 14 items were invalid (dropped)" in caplog.text


async def test_invalid_items_go_to_their_own_feed_and_nowhere_else(tmp_path: Path) -> None:
    invalid = tmp_path / "invalid.jsonl"
    crawler, written = await run(
        tmp_path, VALIDATION_INVALID="feed", VALIDATION_INVALID_FEED=str(invalid)
    )
    routed = [json.loads(line) for line in invalid.read_text().splitlines()]
    assert len(routed) == INVALID and len(written) == len(ITEMS) - INVALID
    assert {"name": "b"} in routed and {"name": "b"} not in written
    stats = crawler.stats.to_dict()
    assert stats["validation/items/routed"] == INVALID
    assert stats["item_scraped_count"] == len(ITEMS) - INVALID
    assert "item_dropped_count" not in stats


async def test_the_report_keeps_sample_invalid_items_with_their_errors(tmp_path: Path) -> None:
    crawler, _ = await run(tmp_path, VALIDATION_SAMPLES=2, MONITOR_REPORT_DIR=str(tmp_path))
    report = json.loads((tmp_path / "yields.report.json").read_text())
    samples = report["validation"]["samples"]
    assert samples == [
        {"type": "dict", "item": {"name": "b"}, "errors": [{"field": "price", "rule": "required"}]},
        {"type": "dict", "item": {"price": 2}, "errors": [{"field": "name", "rule": "required"}]},
    ]
    assert report["validation"]["validation/items/invalid"] == INVALID
    assert crawler.control.report == report


async def test_a_schema_file_and_a_schema_for_every_item(tmp_path: Path) -> None:
    path = tmp_path / "any.json"
    path.write_text(json.dumps({"type": "object", "required": ["name"]}))
    crawler, written = await run(tmp_path, VALIDATION_SCHEMAS=[str(path)])
    stats = validation_stats(crawler)
    assert stats["validation/errors/name/required"] == 8  # {"price": 2}, Reviews, StoreItems
    assert len(written) == len(ITEMS) - 8


@pytest.mark.parametrize(
    ("settings", "message"),
    [
        ({"VALIDATION_SCHEMAS": {dict: {"type": "nonsense"}}}, "not a valid JSON Schema"),
        ({"VALIDATION_SCHEMAS": ["missing.json"]}, "cannot read missing.json"),
        ({"VALIDATION_SCHEMAS": ["https://example.com/s.json"]}, "from local files"),
        ({"VALIDATION_SCHEMAS": {dict: "fields"}}, "'fields' checks an Item class"),
        ({"VALIDATION_SCHEMAS": {dict: 42}}, "42 is not a schema"),
        ({"VALIDATION_SCHEMAS": {"no.such.Item": {}}}, "cannot import 'no.such'"),
        ({"VALIDATION_INVALID": "quarantine"}, "VALIDATION_INVALID must be one of"),
        ({"VALIDATION_INVALID": "feed"}, "needs VALIDATION_INVALID_FEED"),
        (
            {"VALIDATION_INVALID": "feed", "VALIDATION_INVALID_FEED": "{feed}"},
            "is also in FEEDS",
        ),
        ({"VALIDATION_SCHEMAS": {Item: "fields"}}, "declares no Field"),
    ],
)
async def test_a_bad_validation_setting_is_refused_at_start(
    tmp_path: Path, settings: dict[str, Any], message: str
) -> None:
    feed = str(tmp_path / "items.jsonl")
    merged = {"VALIDATION_SCHEMAS": schemas(), **settings}
    if merged.get("VALIDATION_INVALID_FEED") == "{feed}":
        merged["VALIDATION_INVALID_FEED"] = feed
    crawler = Crawler(Yields, {"FEEDS": {feed: {}}, **merged})
    with pytest.raises(ConfigError, match=message):
        crawler.build()


def test_spidermons_pipeline_path_validates_with_spidermons_settings(tmp_path: Path) -> None:
    path = tmp_path / "schema.json"
    path.write_text(json.dumps(PRODUCT_SCHEMA))
    pipeline = "spidermon.contrib.scrapy.pipelines.ItemValidationPipeline"
    crawler = Crawler(
        Yields,
        {"ITEM_PIPELINES": {pipeline: 800}, "SPIDERMON_VALIDATION_SCHEMAS": {dict: str(path)}},
    )
    validator = validator_of(crawler.build().pipelines.pipelines)
    assert validator is not None and validator.mode == "keep"  # Spidermon's default
    dropping = Crawler(
        Yields,
        {
            "ITEM_PIPELINES": {pipeline: 800},
            "SPIDERMON_VALIDATION_SCHEMAS": [str(path)],
            "SPIDERMON_VALIDATION_DROP_ITEMS_WITH_ERRORS": True,
        },
    )
    validator = validator_of(dropping.build().pipelines.pipelines)
    assert validator is not None and validator.mode == "drop"


def test_spidermons_schemas_without_its_pipeline_are_refused(tmp_path: Path) -> None:
    crawler = Crawler(Yields, {"SPIDERMON_VALIDATION_SCHEMAS": [str(tmp_path / "s.json")]})
    with pytest.raises(ConfigError, match="ITEM_PIPELINES does not have"):
        crawler.build()


def test_a_crawl_without_validation_or_monitors_has_no_extra_step() -> None:
    crawler = Crawler(Yields)
    project = crawler.build()
    assert validator_of(project.pipelines.pipelines) is None
    assert [name for name, *_ in project.pipelines._steps] == []
    assert not crawler.signals.live  # no monitoring listens to spider_opened/closed
