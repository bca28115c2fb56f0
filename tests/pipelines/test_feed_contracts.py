"""The feed registries' contract suites (skitter.testing.feed_contract) run against the
exporters and storages skitter ships with Scrapy's API (the FTP one on pyftpdlib, on
127.0.0.1)."""

from __future__ import annotations

import csv
import io
import json
import marshal
import pickle
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import lxml.etree
import pytest

from skitter.exporters import (
    CsvItemExporter,
    JsonItemExporter,
    JsonLinesItemExporter,
    MarshalItemExporter,
    PickleItemExporter,
    XmlItemExporter,
)
from skitter.extensions.feedexport import BlockingFeedStorage, FileFeedStorage, FTPFeedStorage
from skitter.testing.feed_contract import FeedStorageContract, ItemExporterContract

from ._ftp_server import SECRET, ftp_server

Reader = Callable[[bytes], list[dict[str, Any]]]


def _loads_all(load: Callable[[io.BytesIO], Any]) -> Reader:
    def read(data: bytes) -> list[dict[str, Any]]:
        stream, out = io.BytesIO(data), []
        while stream.tell() < len(data):
            out.append(load(stream))
        return out

    return read


def _xml(data: bytes) -> list[dict[str, Any]]:
    root = lxml.etree.fromstring(data)
    return [{field.tag: field.text or "" for field in item} for item in root]


READERS: dict[type, Reader] = {
    JsonItemExporter: lambda data: json.loads(data),
    JsonLinesItemExporter: lambda data: [json.loads(line) for line in data.splitlines()],
    CsvItemExporter: lambda data: list(csv.DictReader(io.StringIO(data.decode()))),
    XmlItemExporter: _xml,
    PickleItemExporter: _loads_all(pickle.load),
    MarshalItemExporter: _loads_all(marshal.load),
}


class TestScrapyApiExporters(ItemExporterContract):
    @pytest.fixture(params=list(READERS), ids=lambda cls: cls.__name__)
    def exporter_class(self, request: pytest.FixtureRequest) -> type:
        return request.param  # type: ignore[no-any-return]

    @pytest.fixture
    def read_back(self, exporter_class: type) -> Reader:
        return READERS[exporter_class]


class Folder(BlockingFeedStorage):
    """A storage written Scrapy's usual way, into a folder: what a project's SFTP or
    WebDAV storage looks like."""

    def __init__(self, uri: str, *, feed_options: Any = None) -> None:
        self.path = Path(uri.removeprefix("folder://"))

    def _store_in_thread(self, file: Any) -> None:
        file.seek(0)
        self.path.write_bytes(file.read())
        file.close()


class TestFileFeedStorage(FeedStorageContract):
    @pytest.fixture
    def storage_class(self) -> type:
        return FileFeedStorage

    @pytest.fixture
    def target(self, tmp_path: Path) -> tuple[str, Callable[[], bytes]]:
        path = tmp_path / "out" / "feed.jsonl"
        return path.as_uri(), path.read_bytes


class TestBlockingFeedStorage(FeedStorageContract):
    @pytest.fixture
    def storage_class(self) -> type:
        return Folder

    @pytest.fixture
    def target(self, tmp_path: Path) -> tuple[str, Callable[[], bytes]]:
        path = tmp_path / "feed.jsonl"
        return f"folder://{path}", path.read_bytes


@pytest.mark.network
class TestFtpFeedStorage(FeedStorageContract):
    @pytest.fixture
    def storage_class(self) -> type:
        return FTPFeedStorage

    @pytest.fixture
    def target(self, tmp_path: Path) -> Iterator[tuple[str, Callable[[], bytes]]]:
        home = tmp_path / "ftp"
        with ftp_server(home) as port:
            uri = f"ftp://user:{SECRET}@127.0.0.1:{port}/feeds/feed.jsonl"
            yield uri, (home / "feeds" / "feed.jsonl").read_bytes
