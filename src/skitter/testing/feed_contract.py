"""The contracts of the feed registries as reusable pytest suites: an exporter for
``FEED_EXPORTERS`` and a storage for ``FEED_STORAGES``, each checked the way the feed
layer uses it (through ``skitter.pipelines``' adapters), so a third-party class that
passes works in a crawl.

Subclass in a test module named ``Test...`` and override the fixtures::

    class TestTsvExporter(ItemExporterContract):
        @pytest.fixture
        def exporter_class(self):
            return TsvItemExporter

        @pytest.fixture
        def read_back(self):
            return lambda data: [dict(zip(("a", "b"), line.split("\\t"))) for line in ...]

    class TestSftpStorage(FeedStorageContract):
        @pytest.fixture
        def storage_class(self):
            return SftpFeedStorage

        @pytest.fixture
        def target(self, tmp_path):   # where a feed goes, and how to read it back
            return f"sftp://127.0.0.1:{port}/feed.jsonl", lambda: fetch_bytes(...)

``read_back(bytes)`` returns the items a document holds, as dicts of strings (the
contract exports string values only, which every format holds). skitter runs the suites
against its own classes (tests/pipelines/test_feed_contracts.py).
"""

from __future__ import annotations

import asyncio
import io
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from skitter.pipelines.wiring import ScrapyExporter, ScrapyStorage

__all__ = ["FeedStorageContract", "ItemExporterContract"]

ITEMS = [{"a": "1", "b": "x"}, {"a": "2", "b": "y"}, {"a": "3", "b": "z"}]


def _export(cls: type, items: list[dict[str, Any]], **options: Any) -> bytes:
    """``items`` written as the feed layer writes them (``ScrapyExporter``)."""
    file = io.BytesIO()
    exporter = ScrapyExporter(file, exporter=cls, name="contract", **options)
    exporter.start(existing=False)
    for item in items:
        exporter.export(item)
    exporter.finish()
    return file.getvalue()


class ItemExporterContract:
    """The promises of an exporter of Scrapy's API, as a feed uses it."""

    @pytest.fixture
    def exporter_class(self) -> type:
        raise NotImplementedError("override the exporter_class fixture")

    @pytest.fixture
    def read_back(self) -> Callable[[bytes], list[dict[str, Any]]]:
        raise NotImplementedError("override the read_back fixture")

    def test_a_document_holds_every_item_in_order(
        self, exporter_class: type, read_back: Callable[[bytes], list[dict[str, Any]]]
    ) -> None:
        assert read_back(_export(exporter_class, ITEMS)) == ITEMS

    def test_no_item_is_still_a_document(
        self, exporter_class: type, read_back: Callable[[bytes], list[dict[str, Any]]]
    ) -> None:
        assert read_back(_export(exporter_class, [])) == []

    def test_fields_choose_and_order_what_is_written(
        self, exporter_class: type, read_back: Callable[[bytes], list[dict[str, Any]]]
    ) -> None:
        written = read_back(_export(exporter_class, ITEMS, fields=("b",)))
        assert written == [{"b": item["b"]} for item in ITEMS]

    def test_the_feeds_encoding_is_taken(
        self, exporter_class: type, read_back: Callable[[bytes], list[dict[str, Any]]]
    ) -> None:
        items = [{"a": "caf\xe9", "b": "x"}]
        assert read_back(_export(exporter_class, items, encoding="utf-8")) == items

    def test_the_file_is_left_open_for_the_feed(self, exporter_class: type) -> None:
        file = io.BytesIO()
        exporter = ScrapyExporter(file, exporter=exporter_class, name="contract")
        exporter.start(existing=False)
        exporter.export(ITEMS[0])
        exporter.finish()
        assert not file.closed  # the feed flushes and closes it


class FeedStorageContract:
    """The promises of a storage of Scrapy's API, as a staged feed uses it: built per
    target with ``feed_options``, given the finished file, storing it whole."""

    @pytest.fixture
    def storage_class(self) -> type:
        raise NotImplementedError("override the storage_class fixture")

    @pytest.fixture
    def target(self, tmp_path: Path) -> tuple[str, Callable[[], bytes]]:
        """A URI to store at, and how to read what is stored there."""
        raise NotImplementedError("override the target fixture")

    def _store(self, storage_class: type, uri: str, data: bytes, tmp: Path, **options: Any) -> None:
        source = tmp / "staged.jsonl"
        source.write_bytes(data)
        storage = ScrapyStorage(storage_class, {"overwrite": True, **options}, spider=None)
        asyncio.run(storage.store(source, uri))

    def test_the_finished_file_is_stored_whole(
        self,
        storage_class: type,
        target: tuple[str, Callable[[], bytes]],
        tmp_path: Path,
    ) -> None:
        uri, read = target
        data = b"".join(b'{"n":%d}\n' % n for n in range(1000))
        self._store(storage_class, uri, data, tmp_path)
        assert read() == data

    def test_overwrite_replaces_what_was_stored(
        self,
        storage_class: type,
        target: tuple[str, Callable[[], bytes]],
        tmp_path: Path,
    ) -> None:
        uri, read = target
        self._store(storage_class, uri, b"first\n", tmp_path)
        self._store(storage_class, uri, b"second\n", tmp_path)
        assert read() == b"second\n"

    def test_an_empty_feed_is_stored(
        self,
        storage_class: type,
        target: tuple[str, Callable[[], bytes]],
        tmp_path: Path,
    ) -> None:
        uri, read = target
        self._store(storage_class, uri, b"", tmp_path)
        assert read() == b""
