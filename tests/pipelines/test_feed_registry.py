"""FEED_EXPORTERS and FEED_STORAGES: the user's formats and storages, with Scrapy's API,
merged over the built-in tables; a crawl writes through them."""

from __future__ import annotations

import asyncio
import json
from pathlib import Path
from typing import Any, ClassVar

import pytest

from skitter import Crawler, Request, Spider
from skitter.exceptions import ConfigError, ScrapyDeprecationWarning
from skitter.exporters import BaseItemExporter, JsonItemExporter
from skitter.extensions.feedexport import BlockingFeedStorage, FileFeedStorage
from skitter.pipelines import parse_feeds
from skitter.pipelines._feed_registry import FEED_EXPORTERS_BASE, FEED_STORAGES_BASE


class Numbers(Spider):
    """Three pages (data: URLs, no server), one item each."""

    name = "numbers"
    allowed_schemes: ClassVar[list[str]] = ["data"]

    def start_requests(self) -> Any:
        for n in range(3):
            yield Request(f"data:,{n}")

    def parse(self, response: Any) -> Any:
        yield {"n": int(response.text)}


class TsvExporter(BaseItemExporter):
    """A project's own format: tab-separated values, with a header and a footer."""

    def __init__(self, file: Any, **kwargs: Any) -> None:
        self.marker = kwargs.pop("marker", "#")
        super().__init__(**kwargs)
        self.file = file

    def start_exporting(self) -> None:
        self.file.write(f"{self.marker}start\n".encode())

    def export_item(self, item: Any) -> None:
        values = [str(value) for _, value in self.get_serialized_fields(item)]
        self.file.write(("\t".join(values) + "\n").encode(self.encoding or "utf-8"))

    def finish_exporting(self) -> None:
        self.file.write(f"{self.marker}end\n".encode())


STORED: dict[str, bytes] = {}


class MemoryStorage:
    """A project's own storage with Scrapy's interface (built with the URI and the feed's
    options; ``open`` gives a file, ``store`` keeps it)."""

    def __init__(self, uri: str, *, feed_options: dict[str, Any] | None = None) -> None:
        self.uri = uri
        self.feed_options = feed_options

    def open(self, spider: Any) -> Any:
        import io

        return io.BytesIO()

    def store(self, file: Any) -> None:
        STORED[self.uri] = file.getvalue()


class AsyncMemoryStorage(MemoryStorage):
    async def store(self, file: Any) -> None:  # type: ignore[override]
        await asyncio.sleep(0)
        STORED[self.uri] = file.getvalue()


def crawl(**settings: Any) -> Crawler:
    crawler = Crawler(Numbers, {"LOG_LEVEL": "WARNING", **settings})
    asyncio.run(crawler.run())
    return crawler


def test_a_format_of_the_projects_own_writes_the_feed(tmp_path: Path) -> None:
    out = tmp_path / "out.tsv"
    crawl(
        FEED_EXPORTERS={"tsv": f"{__name__}.TsvExporter"},
        FEEDS={str(out): {"format": "tsv", "item_export_kwargs": {"marker": "!"}}},
    )
    lines = out.read_text().splitlines()
    assert lines[0] == "!start" and lines[-1] == "!end"
    assert sorted(lines[1:-1]) == ["0", "1", "2"]


def test_a_built_in_format_can_be_replaced(tmp_path: Path) -> None:
    out = tmp_path / "out.json"
    crawl(FEED_EXPORTERS={"json": JsonItemExporter}, FEEDS={str(out): {"indent": None}})
    # Scrapy's JsonItemExporter with indent=None writes the array on one line.
    text = out.read_text()
    assert "\n" not in text
    assert sorted(item["n"] for item in json.loads(text)) == [0, 1, 2]


def test_a_switched_off_format_is_refused_at_start(tmp_path: Path) -> None:
    with pytest.raises(ConfigError, match="format switched off by FEED_EXPORTERS 'csv'"):
        parse_feeds({str(tmp_path / "a.csv"): {}}, settings={"FEED_EXPORTERS": {"csv": None}})


def test_a_class_that_is_not_an_exporter_is_refused(tmp_path: Path) -> None:
    with pytest.raises(ConfigError, match="is not an item exporter"):
        parse_feeds(
            {str(tmp_path / "a.x"): {"format": "x"}},
            settings={"FEED_EXPORTERS": {"x": "collections.OrderedDict"}},
        )


def test_item_export_kwargs_are_refused_for_a_built_in_format(tmp_path: Path) -> None:
    with pytest.raises(ConfigError, match="item_export_kwargs"):
        parse_feeds({str(tmp_path / "a.json"): {"item_export_kwargs": {"sort_keys": True}}})


@pytest.mark.parametrize("storage", [MemoryStorage, AsyncMemoryStorage])
def test_a_storage_of_the_projects_own_receives_the_finished_file(storage: type) -> None:
    STORED.clear()
    crawl(
        FEED_STORAGES={"mem": storage},
        FEEDS={"mem://bucket/%(name)s.jsonl": {"format": "jsonl"}},
    )
    assert list(STORED) == ["mem://bucket/numbers.jsonl"]
    lines = STORED["mem://bucket/numbers.jsonl"].decode().splitlines()
    assert sorted(json.loads(line)["n"] for line in lines) == [0, 1, 2]


def test_a_storage_of_the_projects_own_can_take_over_local_files(tmp_path: Path) -> None:
    STORED.clear()
    crawl(FEED_STORAGES={"file": f"{__name__}.MemoryStorage"}, FEEDS={"file:///x/o.jsonl": {}})
    assert list(STORED) == ["file:///x/o.jsonl"]
    assert not Path("/x/o.jsonl").exists()


def test_a_switched_off_storage_is_refused_at_start() -> None:
    with pytest.raises(ConfigError, match="storage switched off by FEED_STORAGES 's3://'"):
        parse_feeds({"s3://b/k.json": {}}, settings={"FEED_STORAGES": {"s3": None}})


def test_scrapys_own_storage_paths_name_the_built_ins() -> None:
    settings = {"FEED_STORAGES": {"ftp": "scrapy.extensions.feedexport.FTPFeedStorage"}}
    [opts] = parse_feeds({"ftp://u:p@127.0.0.1/a.json": {}}, settings=settings)
    assert opts.storage is None  # skitter's own FTP storage


def test_the_built_ins_are_entries_of_the_tables() -> None:
    [opts] = parse_feeds({"a.jsonl": {}})
    module, _, name = FEED_EXPORTERS_BASE["jsonl"].rpartition(".")
    assert f"{opts.exporter.__module__}.{opts.exporter.__name__}" == f"{module}.{name}"
    assert set(FEED_STORAGES_BASE) == {"file", "s3", "gs", "ftp"}


def test_feed_uri_and_feed_format_become_a_feed_with_a_deprecation_warning(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    out = tmp_path / "%(name)s.csv"
    with pytest.warns(ScrapyDeprecationWarning, match="FEED_URI and FEED_FORMAT"):
        crawl(FEED_URI=str(out), FEED_FORMAT="csv")
    assert (tmp_path / "numbers.csv").read_text().splitlines()[0] == "n"
    assert "write FEEDS = {" in caplog.text


def test_feed_uri_without_feed_format_is_json_lines_as_in_scrapy(tmp_path: Path) -> None:
    out = tmp_path / "items.json"
    with pytest.warns(ScrapyDeprecationWarning):
        crawl(FEED_URI=str(out))
    lines = out.read_text().splitlines()
    assert sorted(json.loads(line)["n"] for line in lines) == [0, 1, 2]


def test_feed_uri_none_and_feed_format_alone_are_accepted_and_change_nothing(
    tmp_path: Path,
) -> None:
    import warnings

    with warnings.catch_warnings():
        warnings.simplefilter("error", ScrapyDeprecationWarning)
        crawler = crawl(FEED_URI=None, FEED_FORMAT="json")
    assert not any(key.startswith("feedexport/") for key in crawler.stats.get_stats())


def test_dash_o_takes_a_format_of_the_projects_own() -> None:
    from skitter.cli._options import split_output

    assert split_output("out.tsv:tsv") == ("out.tsv", "tsv")
    assert split_output("items:2024.json") == ("items:2024.json", None)
    assert split_output("ftp://u:p@h/x.json") == ("ftp://u:p@h/x.json", None)


class SettingsStorage(MemoryStorage):
    """Built with from_crawler, as Scrapy builds storages: reads a project setting."""

    @classmethod
    def from_crawler(cls, crawler: Any, uri: str, *, feed_options: Any = None) -> Any:
        storage = cls(uri, feed_options=feed_options)
        storage.prefix = crawler.settings["MEM_PREFIX"]
        return storage

    def store(self, file: Any) -> None:
        STORED[self.prefix + self.uri] = file.getvalue()


def test_a_storage_is_built_from_the_crawler_when_it_can_be() -> None:
    STORED.clear()
    crawl(
        FEED_STORAGES={"mem": SettingsStorage},
        FEEDS={"mem://b/x.jsonl": {}},
        MEM_PREFIX="p:",
    )
    assert list(STORED) == ["p:mem://b/x.jsonl"]


class Blocking(BlockingFeedStorage):
    """A project's storage written Scrapy's usual way: upload from a worker thread."""

    def __init__(self, uri: str, *, feed_options: Any = None) -> None:
        self.uri = uri

    def _store_in_thread(self, file: Any) -> None:
        file.seek(0)
        STORED[self.uri] = file.read()
        file.close()


def test_a_blocking_storage_uploads_its_temporary_file(tmp_path: Path) -> None:
    STORED.clear()
    crawl(
        FEED_STORAGES={"sftp": Blocking},
        FEEDS={"sftp://host/out.jsonl": {}},
        FEED_TEMPDIR=str(tmp_path),
    )
    lines = STORED["sftp://host/out.jsonl"].decode().splitlines()
    assert sorted(json.loads(line)["n"] for line in lines) == [0, 1, 2]


def test_scrapys_file_storage_appends_or_overwrites(tmp_path: Path) -> None:
    path = tmp_path / "a" / "out.txt"
    for overwrite, expected in ((False, b"xx"), (True, b"x")):
        if overwrite is False:
            path.parent.mkdir(parents=True, exist_ok=True)
            path.write_bytes(b"x")
        storage = FileFeedStorage(path.as_uri(), feed_options={"overwrite": overwrite})
        file = storage.open(None)
        file.write(b"x")
        storage.store(file)
        assert path.read_bytes() == expected


class SettingsTsvExporter(TsvExporter):
    """Built with from_crawler, as Scrapy builds exporters: its marker is a setting."""

    @classmethod
    def from_crawler(cls, crawler: Any, file: Any, **kwargs: Any) -> Any:
        return cls(file, marker=crawler.settings["MEM_PREFIX"], **kwargs)


def test_an_exporter_is_built_from_the_crawler_when_it_can_be(tmp_path: Path) -> None:
    out = tmp_path / "out.tsv"
    crawl(
        FEED_EXPORTERS={"tsv": SettingsTsvExporter},
        FEEDS={str(out): {"format": "tsv"}},
        MEM_PREFIX="@",
    )
    lines = out.read_text().splitlines()
    assert (lines[0], lines[-1]) == ("@start", "@end")
