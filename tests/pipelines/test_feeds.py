"""Feed exports: every format written and parsed back, appends, odd values, cancellation."""

from __future__ import annotations

import asyncio
import csv
import dataclasses
import io
import json
import logging
import re
from datetime import UTC, datetime
from decimal import Decimal
from pathlib import Path
from typing import Any

import attrs
import pydantic
import pytest

from skitter.exceptions import ConfigError, StorageError
from skitter.pipelines import FeedExporter, parse_feeds
from skitter.pipelines._feeds import FLUSH_SECONDS, build_feeds


@dataclasses.dataclass
class DataItem:
    name: str
    price: float


@attrs.define
class AttrsItem:
    name: str
    price: float


class PydanticItem(pydantic.BaseModel):
    name: str
    price: float


KINDS = [
    lambda n, p: {"name": n, "price": p},
    DataItem,
    AttrsItem,
    lambda n, p: PydanticItem(name=n, price=p),
]
KIND_IDS = ["dict", "dataclass", "attrs", "pydantic"]


def read_back(path: Path, fmt: str) -> list[dict[str, Any]]:
    text = path.read_text(encoding="utf-8")
    if fmt == "jsonl":
        return [json.loads(line) for line in text.splitlines()]
    if fmt == "json":
        return json.loads(text)
    return list(csv.DictReader(io.StringIO(text)))


def export(path: Path, items: list[Any], crawler: Any = None, **options: Any) -> FeedExporter:
    [opts] = parse_feeds({str(path): options}, spider_name="shop")
    feed = FeedExporter(opts, stats=getattr(crawler, "stats", None))
    feed.open_spider(None)
    for item in items:
        assert feed.process_item(item, None) is item
    feed.close_spider(None)
    return feed


@pytest.mark.parametrize("make", KINDS, ids=KIND_IDS)
@pytest.mark.parametrize("suffix", [".jsonl", ".jl", ".ndjson", ".json", ".csv"])
def test_each_format_round_trips_each_item_kind(tmp_path, make, suffix) -> None:
    path = tmp_path / f"items{suffix}"
    export(path, [make("a", 1.5), make("b", 2.0)])
    fmt = {".json": "json", ".csv": "csv"}.get(suffix, "jsonl")
    rows = read_back(path, fmt)
    if fmt == "csv":
        assert rows == [{"name": "a", "price": "1.5"}, {"name": "b", "price": "2.0"}]
    else:
        assert rows == [{"name": "a", "price": 1.5}, {"name": "b", "price": 2.0}]


def test_explicit_format_wins_over_the_extension(tmp_path) -> None:
    path = tmp_path / "items.txt"
    export(path, [{"a": 1}], format="csv")
    assert path.read_bytes() == b"a\r\n1\r\n"


def test_values_json_cannot_encode_do_not_stop_the_export(tmp_path) -> None:
    when = datetime(2024, 5, 1, 12, 30, tzinfo=UTC)
    item = {
        "when": when,
        "price": Decimal("9.99"),
        "tags": {"x"},
        "raw": b"\xffab",
        "nested": AttrsItem("n", 1.0),
        "big": 2**70,
        "keys": {1: "one"},
    }
    for suffix in (".jsonl", ".json"):
        path = tmp_path / f"odd{suffix}"
        export(path, [item, {"plain": True}])
        rows = read_back(path, "jsonl" if suffix == ".jsonl" else "json")
        assert rows[0]["when"] == "2024-05-01T12:30:00+00:00"
        assert rows[0]["price"] == "9.99"
        assert rows[0]["tags"] == ["x"]
        assert rows[0]["nested"] == {"name": "n", "price": 1.0}
        assert rows[0]["big"] == 2**70
        assert rows[0]["keys"] == {"1": "one"}
        assert rows[1] == {"plain": True}


def test_an_item_that_cannot_be_encoded_is_refused_whole(tmp_path) -> None:
    path = tmp_path / "nan.jsonl"
    [opts] = parse_feeds({str(path): {}})
    feed = FeedExporter(opts)
    feed.open_spider(None)
    feed.process_item({"ok": 1}, None)
    with pytest.raises(StorageError, match=r"field 'nan' .*JSON has no NaN"):
        feed.process_item({"big": 2**70, "nan": float("nan")}, None)
    feed.process_item({"ok": 2}, None)
    feed.close_spider(None)
    assert read_back(path, "jsonl") == [{"ok": 1}, {"ok": 2}]


def test_json_array_is_valid_after_a_cancelled_crawl(tmp_path) -> None:
    path = tmp_path / "out.json"
    [opts] = parse_feeds({str(path): {}})
    feed = FeedExporter(opts)

    async def crawl(midway: asyncio.Event) -> None:
        feed.open_spider(None)
        try:
            n = 0
            while True:  # an endless crawl: only cancellation ends it
                feed.process_item({"n": n}, None)
                n += 1
                if n == 50:
                    midway.set()
                await asyncio.sleep(0)
        finally:
            feed.close_spider(None)

    async def main() -> None:
        midway = asyncio.Event()
        task = asyncio.create_task(crawl(midway))
        await midway.wait()
        task.cancel()
        with pytest.raises(asyncio.CancelledError):
            await task

    asyncio.run(main())
    rows = json.loads(path.read_bytes())
    assert [row["n"] for row in rows] == list(range(len(rows)))
    assert len(rows) >= 50


def test_items_reach_the_disk_once_a_second(tmp_path) -> None:
    from skitter._clock import FakeClock

    clock = FakeClock()
    path = tmp_path / "out.jsonl"
    [opts] = parse_feeds({str(path): {}})
    feed = FeedExporter(opts, clock=clock)
    feed.open_spider(None)
    feed.process_item({"n": 1}, None)
    assert path.read_bytes() == b""  # still in the buffer
    clock.advance(FLUSH_SECONDS)
    feed.process_item({"n": 2}, None)
    assert read_back(path, "jsonl") == [{"n": 1}, {"n": 2}]
    feed.close_spider(None)


@pytest.mark.parametrize("suffix", [".json", ".jsonl", ".csv"])
def test_append_continues_the_document(tmp_path, suffix) -> None:
    path = tmp_path / f"out{suffix}"
    export(path, [{"n": "1"}])
    export(path, [{"n": "2"}, {"n": "3"}])
    fmt = {".json": "json", ".csv": "csv"}.get(suffix, "jsonl")
    assert read_back(path, fmt) == [{"n": "1"}, {"n": "2"}, {"n": "3"}]


def test_append_to_an_empty_json_array_and_a_blank_file(tmp_path) -> None:
    path = tmp_path / "out.json"
    export(path, [])
    assert json.loads(path.read_text()) == []
    export(path, [{"n": 1}])
    assert json.loads(path.read_text()) == [{"n": 1}]
    path.write_text("  \n")
    export(path, [{"n": 2}])
    assert json.loads(path.read_text()) == [{"n": 2}]


def test_append_to_something_that_is_not_a_json_array_is_refused(tmp_path) -> None:
    path = tmp_path / "out.json"
    path.write_text('{"not": "an array"}')
    with pytest.raises(ConfigError, match="overwrite"):
        export(path, [{"n": 1}])
    assert path.read_text() == '{"not": "an array"}'


def test_append_after_a_truncated_jsonl_line_starts_a_new_line(tmp_path) -> None:
    path = tmp_path / "out.jsonl"
    path.write_text('{"n": 1}\n{"n": 2')  # the previous run was killed mid-write
    export(path, [{"n": 3}])
    assert path.read_text().splitlines()[-1] == '{"n":3}'


def test_overwrite_replaces_the_file(tmp_path) -> None:
    path = tmp_path / "out.json"
    export(path, [{"n": 1}])
    export(path, [{"n": 2}], overwrite=True)
    assert json.loads(path.read_text()) == [{"n": 2}]


def test_csv_append_keeps_the_files_header(tmp_path) -> None:
    path = tmp_path / "out.csv"
    export(path, [{"a": 1, "b": 2}])
    export(path, [{"b": 4, "a": 3}])
    assert path.read_bytes() == b"a,b\r\n1,2\r\n3,4\r\n"


def test_csv_extra_fields_are_left_out_with_one_warning(tmp_path, caplog) -> None:
    path = tmp_path / "out.csv"
    with caplog.at_level(logging.WARNING, logger="skitter.feeds"):
        export(path, [{"a": 1}, {"a": 2, "x": 9}, {"a": 3, "y": 8}, {"b": 5}])
    assert read_back(path, "csv") == [{"a": "1"}, {"a": "2"}, {"a": "3"}, {"a": ""}]
    warnings = [r for r in caplog.records if "no columns" in r.getMessage()]
    assert len(warnings) == 1
    assert "'x'" in warnings[0].getMessage()


def test_csv_fields_choose_columns_and_nested_values_are_json(tmp_path) -> None:
    path = tmp_path / "out.csv"
    item = {"name": "a", "tags": ["x", "y"], "dims": {"w": 1}, "maker": DataItem("m", 2.0)}
    item["sizes"] = [1, 2]
    fields = ["tags", "name", "dims", "maker", "gone", "sizes"]
    export(path, [item, {"name": "b"}], fields=fields)
    rows = read_back(path, "csv")
    assert list(rows[0]) == fields
    assert rows[0]["tags"] == "x,y"  # Scrapy's join_multivalued
    assert json.loads(rows[0]["sizes"]) == [1, 2]
    assert json.loads(rows[0]["dims"]) == {"w": 1}
    assert json.loads(rows[0]["maker"]) == {"name": "m", "price": 2.0}
    assert rows[1] == {"tags": "", "name": "b", "dims": "", "maker": "", "gone": "", "sizes": ""}


def test_fields_also_select_json_keys(tmp_path) -> None:
    path = tmp_path / "out.jsonl"
    export(path, [{"a": 1, "b": 2, "c": 3}], fields=["c", "a"])
    assert path.read_text() == '{"c":3,"a":1}\n'


def test_indent_pretty_prints_a_json_array(tmp_path) -> None:
    path = tmp_path / "out.json"
    export(path, [{"a": [1, 2]}, {"é": "ü"}], indent=4)
    text = path.read_text(encoding="utf-8")
    assert json.loads(text) == [{"a": [1, 2]}, {"é": "ü"}]
    assert '\n        "a": [' in text
    assert "ü" in text


@pytest.mark.parametrize("suffix", [".json", ".jsonl", ".csv"])
def test_other_encodings(tmp_path, suffix) -> None:
    path = tmp_path / f"out{suffix}"
    export(path, [{"name": "café"}], encoding="latin-1")
    text = path.read_bytes().decode("latin-1")
    if suffix == ".csv":
        assert text == "name\r\ncafé\r\n"
    elif suffix == ".jsonl":
        assert json.loads(text) == {"name": "café"}
    else:
        assert json.loads(text) == [{"name": "café"}]


def test_item_classes_filter_what_a_feed_gets(tmp_path) -> None:
    path = tmp_path / "out.jsonl"
    export(path, [DataItem("a", 1.0), {"b": 2}], item_classes=[f"{__name__}.DataItem"])
    assert read_back(path, "jsonl") == [{"name": "a", "price": 1.0}]


def test_stats_and_placeholders(tmp_path, make_crawler) -> None:
    crawler = make_crawler(FEEDS={str(tmp_path / "%(name)s.csv"): {}})
    crawler.spider = type("S", (), {"name": "shop"})()
    [feed] = build_feeds(crawler)
    feed.open_spider(None)
    feed.process_item({"a": 1}, None)
    feed.close_spider(None)
    assert (tmp_path / "shop.csv").read_bytes() == b"a\r\n1\r\n"
    assert crawler.stats["feedexport/success_count/csv"] == 1
    assert crawler.stats["feedexport/success_count/FileFeedStorage"] == 1  # Scrapy's key
    assert crawler.stats["feedexport/item_count/csv"] == 1


def test_parent_directories_are_created(tmp_path) -> None:
    path = tmp_path / "a" / "b" / "out.jsonl"
    export(path, [{"n": 1}])
    assert read_back(path, "jsonl") == [{"n": 1}]


def test_an_unwritable_path_is_a_config_error_naming_it(tmp_path) -> None:
    blocker = tmp_path / "file"
    blocker.write_text("")
    with pytest.raises(ConfigError, match=re.escape("file/out.json")):
        export(blocker / "out.json", [])


@pytest.mark.parametrize(
    ("feeds", "message"),
    [
        ({"out.json": {"fromat": "json"}}, "unsupported option"),
        ({"out.yaml": {}}, "cannot tell the format"),
        ({"out.pickle": {}}, "cannot tell the format"),  # pickle only when named
        ({"out.json": {"format": "yaml"}}, "unknown format"),
        ({"gs://bucket/out.json": {"overwrite": False}}, "cannot append"),
        ({"sftp://host/out.json": {}}, "unknown storage"),
        ({"s3://bucket/out.json": {"overwrite": False}}, "cannot append"),
        ({"out.json": {"batch_item_count": 5}}, "batch_id"),
        ({"out-%(batch_id)d.json": {"batch_item_count": -1}}, "batch_item_count"),
        ({"out.json": {"postprocessing": ["scrapy.extensions.postprocessing.Nope"]}}, "plugin"),
        ({"out.json": {"item_filter": "builtins.object"}}, "accepts"),
        ({"out.json": {"encoding": "klingon"}}, "unknown encoding"),
        ({"out.json": {"fields": "name"}}, "list of names"),
        ({"out.json": {"indent": -1}}, "indent"),
        ({"%(nope)s.json": {}}, "placeholder"),
        ({"out.json": "json"}, "dict of options"),
        ({"out.json": {"encoding": "utf-16"}}, "ASCII-compatible"),
    ],
)
def test_bad_feed_settings_are_config_errors(tmp_path, monkeypatch, feeds, message) -> None:
    monkeypatch.chdir(tmp_path)

    def load() -> None:
        for opts in parse_feeds(feeds):
            FeedExporter(opts).open()

    with pytest.raises(ConfigError, match=message):
        load()


def test_stdout_feed(capfdbinary) -> None:
    [opts] = parse_feeds({"-": {"format": "jsonl"}})
    assert opts.path is None
    feed = FeedExporter(opts)
    feed.open_spider(None)
    feed.process_item({"n": 1}, None)
    feed.close_spider(None)
    assert capfdbinary.readouterr().out == b'{"n":1}\n'


def test_file_uri_and_time_placeholder(tmp_path) -> None:
    [opts] = parse_feeds(
        {f"file://{tmp_path}/%(time)s.jsonl": {}}, now=datetime(2024, 1, 2, 3, 4, 5, tzinfo=UTC)
    )
    assert opts.path == tmp_path / "2024-01-02T03-04-05+00-00.jsonl"


def _exporter(path: Path, fmt: str | None = None) -> FeedExporter:
    options = {"format": fmt} if fmt else {}
    (feed,) = parse_feeds({str(path): options}, spider_name="s", now=datetime.now(UTC))
    return FeedExporter(feed)


def test_jsonl_cut_mid_record_is_truncated_to_its_last_complete_line(tmp_path: Path) -> None:
    path = tmp_path / "items.jsonl"
    path.write_bytes(b'{"n": 1}\n{"n": 2}\n{"n": 3, "na')  # killed mid-write
    feed = _exporter(path)
    feed.open()
    feed.process_item({"n": 4}, None)
    feed.close()
    assert [json.loads(line)["n"] for line in path.read_text().splitlines()] == [1, 2, 4]


def test_a_json_array_left_open_by_a_crash_is_continued(tmp_path: Path) -> None:
    path = tmp_path / "items.json"
    path.write_bytes(b'[\n{"n": 1},\n{"n": 2}')  # no closing bracket
    feed = _exporter(path)
    feed.open()
    feed.process_item({"n": 3}, None)
    feed.close()
    assert [item["n"] for item in json.loads(path.read_text())] == [1, 2, 3]


@pytest.mark.parametrize("ext", ["jsonl", "json", "csv"])
def test_resume_at_cuts_back_to_a_checkpointed_size(tmp_path: Path, ext: str) -> None:
    path = tmp_path / f"items.{ext}"
    feed = _exporter(path)
    feed.open()
    feed.process_item({"n": 1}, None)
    checkpoint = feed.position()
    feed.process_item({"n": 2}, None)  # a task that did not complete before the crash
    feed.flush()
    on_disk_at_crash = path.read_bytes()  # the process dies here, without closing
    feed.close()
    path.write_bytes(on_disk_at_crash)
    again = _exporter(path)
    again.resume_at = checkpoint
    again.open()
    again.process_item({"n": 3}, None)
    again.close()
    if ext == "jsonl":
        got = [json.loads(line)["n"] for line in path.read_text().splitlines()]
    elif ext == "json":
        got = [item["n"] for item in json.loads(path.read_text())]
    else:
        with path.open() as f:
            got = [int(row["n"]) for row in csv.DictReader(f)]
    assert got == [1, 3]
