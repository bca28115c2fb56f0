"""A feed that cannot be written (disk full) is not an item error: StorageError, nothing
more accepted, a checkpoint position never past what reached the file, items lost from
the buffer no longer counted, and a file that is still a valid document when it can be.

The disk is ``FullDisk``: real files whose raw writes are cut short, then refused with
ENOSPC, once a file would grow past a limit; Python's buffering above it is the real one.
"""

from __future__ import annotations

import csv
import io
import json
import re
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from skitter.exceptions import StorageError
from skitter.pipelines import FeedExporter, ItemPipelineManager, parse_feeds
from skitter.pipelines._feeds import build_feeds
from skitter.testing import DictStats, FakeClock, FullDisk


@pytest.fixture
def disk() -> Iterator[FullDisk]:
    """Feeds open their files here; room is unlimited until a test sets ``limit``."""
    full = FullDisk(None)
    with full.feeds():
        yield full


def enospc(path: Path) -> str:
    return re.escape(f"feed '{path}': cannot write: [Errno 28] No space left on device")


def new_feed(path: Path, stats: DictStats | None = None) -> FeedExporter:
    [opts] = parse_feeds({str(path): {}})
    # A clock that never moves: only FLUSH_ITEMS and explicit flushes write the buffer.
    return FeedExporter(opts, stats=stats, clock=FakeClock())


def numbers(path: Path) -> list[int]:
    text = path.read_text()
    if path.suffix == ".jsonl":
        return [json.loads(line)["n"] for line in text.splitlines()]
    if path.suffix == ".json":
        return [item["n"] for item in json.loads(text)]
    return [int(row["n"]) for row in csv.DictReader(io.StringIO(text))]


def item(n: int) -> dict[str, Any]:
    return {"n": n, "pad": "x" * 40}


@pytest.mark.parametrize("ext", ["jsonl", "json", "csv"])
def test_a_write_that_fills_the_disk_breaks_the_feed_for_good(
    tmp_path: Path, ext: str, disk: FullDisk
) -> None:
    disk.buffer_size = 256  # a write, not only a flush, reaches the disk
    path = tmp_path / f"out.{ext}"
    stats = DictStats()
    feed = new_feed(path, stats)
    feed.open()
    for n in range(5):
        feed.process_item(item(n), None)
    good = feed.position()
    disk.limit = good + 100  # room for part of the next buffer
    n = 5
    with pytest.raises(StorageError, match=enospc(path)):  # noqa: PT012 - the write that fails
        while True:
            feed.process_item(item(n), None)
            n += 1
    assert n > 5  # some went into the buffer before it overflowed
    lost = feed.lost_items
    assert lost > 0  # accepted into the buffer, then lost with it
    assert disk.refused == 1
    # Broken for good: refused at once, even with room again.
    disk.limit = None
    with pytest.raises(StorageError, match=enospc(path)):
        feed.process_item(item(100), None)
    for call in (feed.flush, feed.position):
        with pytest.raises(StorageError, match=enospc(path)):
            call()
    with pytest.raises(StorageError, match=enospc(path)):
        feed.close()
    # Cut back to what reached it before the failure, and finished: a valid document.
    assert numbers(path) == [0, 1, 2, 3, 4]
    assert feed.item_count == 5
    assert stats[f"feedexport/item_count/{ext}"] == 5
    assert stats["feedexport/lost_items"] == lost
    assert stats[f"feedexport/failed_count/{ext}"] == 1
    assert stats["feedexport/failed_count/FileFeedStorage"] == 1
    assert f"feedexport/success_count/{ext}" not in stats


def test_a_failed_flush_never_moves_the_checkpoint_position(tmp_path: Path, disk: FullDisk) -> None:
    path = tmp_path / "out.jsonl"
    feed = new_feed(path)
    feed.open()
    for n in range(3):
        feed.process_item(item(n), None)
    good = feed.position()
    assert good == path.stat().st_size
    for n in range(3, 10):
        feed.process_item(item(n), None)  # in the buffer
    disk.limit = good + 10
    with pytest.raises(StorageError, match=enospc(path)):
        feed.position()
    assert path.stat().st_size == good + 10  # half a record reached the file
    with pytest.raises(StorageError):
        feed.position()  # not tell(), which would say good + 10 or more
    with pytest.raises(StorageError):
        feed.close()
    assert path.stat().st_size == good  # the half record is cut off
    assert numbers(path) == [0, 1, 2]
    assert feed.lost_items == 7


def test_a_json_feed_that_fills_the_disk_while_closing_is_still_valid(
    tmp_path: Path, disk: FullDisk
) -> None:
    path = tmp_path / "out.json"
    feed = new_feed(path)
    feed.open()
    for n in range(3):
        feed.process_item(item(n), None)
    good = feed.position()
    feed.process_item(item(3), None)
    disk.limit = good + 5  # the last item does not fit; a closing bracket does
    with pytest.raises(StorageError, match=enospc(path)):
        feed.close()
    assert numbers(path) == [0, 1, 2]
    assert path.read_bytes().endswith(b"}\n]\n")


def test_a_json_feed_that_cannot_be_finished_ends_after_its_last_item_and_continues(
    tmp_path: Path, disk: FullDisk
) -> None:
    path = tmp_path / "out.json"
    feed = new_feed(path)
    feed.open()
    for n in range(3):
        feed.process_item(item(n), None)
    good = feed.position()
    feed.process_item(item(3), None)
    disk.limit = good  # not a byte more
    with pytest.raises(StorageError):
        feed.close()
    assert path.read_bytes().endswith(b"}")  # an array left open, not a record cut in two
    disk.limit = None
    again = new_feed(path)  # the next run appends to it
    again.open()
    again.process_item(item(3), None)
    again.close()
    assert numbers(path) == [0, 1, 2, 3]


def test_a_feed_whose_start_does_not_fit_fails_to_open(tmp_path: Path, disk: FullDisk) -> None:
    disk.limit = 0
    path = tmp_path / "out.json"
    feed = new_feed(path)
    with pytest.raises(
        StorageError, match=re.escape(f"feed '{path}': cannot open: [Errno 28] No space left")
    ):
        feed.open()  # before the crawl starts, not at the first flush


async def test_items_a_feed_lost_are_not_counted_and_later_items_are_refused(
    tmp_path: Path, disk: FullDisk, make_crawler: Any
) -> None:
    path = tmp_path / "out.jsonl"
    crawler = make_crawler(FEEDS={str(path): {}})
    seen: list[int] = []

    class Recorder:
        def process_item(self, item: Any, spider: Any) -> Any:
            seen.append(item["n"])
            return item

    manager = ItemPipelineManager([Recorder()], feeds=build_feeds(crawler), stats=crawler.stats)
    await manager.open_spider(None)
    for n in range(3):
        await manager.process_item(item(n), None)
    manager.flush_feeds()
    disk.limit = path.stat().st_size  # full from here
    for n in range(3, 6):
        assert await manager.process_item(item(n), None) is not None  # buffered
    assert crawler.stats["item_scraped_count"] == 6
    with pytest.raises(StorageError, match=enospc(path)):
        manager.flush_feeds()
    assert crawler.stats["item_scraped_count"] == 3  # only what reached the file
    assert crawler.stats["feedexport/lost_items"] == 3
    with pytest.raises(StorageError, match=enospc(path)):
        await manager.process_item(item(6), None)
    assert seen == [0, 1, 2, 3, 4, 5]  # item 6 was refused before any pipeline saw it
    with pytest.raises(StorageError, match=enospc(path)):
        manager.feed_positions()  # what a job checkpoint asks: it must refuse
    with pytest.raises(StorageError, match=enospc(path)):
        await manager.close_spider(None)
    assert numbers(path) == [0, 1, 2]
    assert crawler.stats["item_scraped_count"] == 3
    assert "item_error_count" not in crawler.stats  # not mistaken for a bad item
