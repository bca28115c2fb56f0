"""Feed formats and options beyond JSON/CSV: XML, marshal, pickle, batches, compression,
item_filter, store_empty, uri_params and the FEED_* defaults."""

from __future__ import annotations

import bz2
import dataclasses
import gzip
import json
import logging
import lzma
import marshal
import pickle
import sys
from pathlib import Path
from typing import Any
from xml.etree import ElementTree

import pytest

from skitter import Crawler, Request, Spider
from skitter.exceptions import ConfigError
from skitter.pipelines import FeedExporter, parse_feeds
from skitter.pipelines._feeds import build_feeds

if sys.version_info >= (3, 14):
    from compression import zstd
else:
    from backports import zstd


@dataclasses.dataclass
class Book:
    title: str
    tags: list[str]


def listing(folder: Path, pattern: str = "*") -> list[Path]:
    return sorted(folder.glob(pattern))


def load_all(path: Path, load: Any, count: int) -> list[Any]:
    with open(path, "rb") as file:
        return [load(file) for _ in range(count)]


def feed_for(uri: str, *, settings: dict[str, Any] | None = None, **options: Any) -> FeedExporter:
    [opts] = parse_feeds({uri: options}, spider_name="shop", settings=settings)
    return FeedExporter(opts, settings=settings)


async def export(uri: str, items: list[Any], **options: Any) -> FeedExporter:
    feed = feed_for(uri, **options)
    feed.open_spider(None)
    for item in items:
        assert feed.process_item(item, None) is item
    closing = feed.close_spider(None)
    if closing is not None:
        await closing
    return feed


async def test_xml_has_scrapys_layout(tmp_path: Path) -> None:
    path = tmp_path / "out.xml"
    await export(str(path), [{"name": "TV", "price": 1200}, Book("A & B", ["x", "y"])])
    text = path.read_text()
    assert text == (
        '<?xml version="1.0" encoding="utf-8"?>\n<items>'
        "\n<item><name>TV</name><price>1200</price></item>"
        "\n<item><title>A &amp; B</title><tags><value>x</value><value>y</value></tags></item>"
        "\n</items>"
    )
    root = ElementTree.fromstring(text.encode())
    assert [item.findtext("name") for item in root] == ["TV", None]


async def test_xml_indent_none_and_nested_dicts(tmp_path: Path) -> None:
    path = tmp_path / "out.xml"
    await export(str(path), [{"dims": {"w": 1, "h": None}}], indent=None)
    assert path.read_text().endswith("<items><item><dims><w>1</w><h></h></dims></item></items>")
    await export(str(path), [{"n": "ü"}], indent=2, encoding="latin-1", overwrite=True)
    root = ElementTree.fromstring(path.read_bytes())
    assert root[0].findtext("n") == "ü"
    assert b"\n  <item>\n    <n>\xfc</n>\n  </item>\n</items>" in path.read_bytes()


async def test_xml_is_continued_inside_its_items(tmp_path: Path) -> None:
    path = tmp_path / "out.xml"
    await export(str(path), [{"n": 1}])
    await export(str(path), [{"n": 2}])
    root = ElementTree.fromstring(path.read_bytes())
    assert [item.findtext("n") for item in root] == ["1", "2"]


async def test_an_xml_field_name_that_is_no_element_name_is_a_named_field(tmp_path) -> None:
    path = tmp_path / "out.xml"
    await export(str(path), [{"a b": 1}])
    [item] = ElementTree.fromstring(path.read_bytes())
    assert [(field.tag, field.get("name"), field.text) for field in item] == [("field", "a b", "1")]


@pytest.mark.parametrize(("fmt", "load"), [("marshal", marshal.load), ("pickle", pickle.load)])
async def test_marshal_and_pickle_only_when_named_with_a_warning(
    tmp_path, caplog, fmt, load
) -> None:
    path = tmp_path / f"out.{fmt}"
    with caplog.at_level(logging.WARNING, "skitter.feeds"):
        await export(str(path), [{"n": 1}, Book("t", ["a"])], format=fmt)
    assert f"Feed format {fmt} can be read only by Python" in caplog.text
    assert load_all(path, load, 2) == [{"n": 1}, {"title": "t", "tags": ["a"]}]


async def test_batches_split_at_the_count(tmp_path: Path) -> None:
    uri = str(tmp_path / "out-%(batch_id)d.jsonl")
    feed = await export(uri, [{"n": n} for n in range(7)], batch_item_count=3)
    files = listing(tmp_path)
    assert [f.name for f in files] == ["out-1.jsonl", "out-2.jsonl", "out-3.jsonl"]
    got = [[json.loads(line)["n"] for line in f.read_text().splitlines()] for f in files]
    assert got == [[0, 1, 2], [3, 4, 5], [6]]
    assert feed.item_count == 7


async def test_a_full_last_batch_leaves_no_empty_file(tmp_path: Path) -> None:
    uri = str(tmp_path / "out-%(batch_id)02d.json")
    await export(uri, [{"n": n} for n in range(4)], batch_item_count=2)
    assert [f.name for f in listing(tmp_path)] == ["out-01.json", "out-02.json"]
    assert json.loads((tmp_path / "out-02.json").read_text()) == [{"n": 2}, {"n": 3}]


async def test_batch_time_names_batches_apart(tmp_path: Path) -> None:
    uri = str(tmp_path / "%(name)s-%(batch_time)s.csv")
    await export(uri, [{"n": n} for n in range(4)], batch_item_count=2)
    files = listing(tmp_path)
    assert len(files) == 2 and all(f.name.startswith("shop-") for f in files)
    assert [f.read_bytes().decode() for f in files] == ["n\r\n0\r\n1\r\n", "n\r\n2\r\n3\r\n"]


def test_feed_export_batch_item_count_is_the_default(tmp_path) -> None:
    [opts] = parse_feeds(
        {str(tmp_path / "%(batch_id)d.jsonl"): {}},
        settings={"FEED_EXPORT_BATCH_ITEM_COUNT": 10},
    )
    assert opts.batch_item_count == 10
    with pytest.raises(ConfigError, match="batch_id"):
        parse_feeds({"out.jsonl": {}}, settings={"FEED_EXPORT_BATCH_ITEM_COUNT": 10})


@pytest.mark.parametrize(
    ("plugin", "opener"),
    [
        ("gzip", gzip.open),
        ("scrapy.extensions.postprocessing.Bz2Plugin", bz2.open),
        ("skitter.extensions.postprocessing.LZMAPlugin", lzma.open),
        ("zstd", zstd.open),
    ],
)
async def test_postprocessing_compresses_to_the_same_lines(tmp_path, plugin, opener) -> None:
    path = tmp_path / "out.jsonl.z"
    items = [{"n": n, "s": "x" * 50} for n in range(200)]
    await export(str(path), items, format="jsonl", postprocessing=[plugin])
    with opener(path, "rb") as file:
        lines = file.read().decode().splitlines()
    assert [json.loads(line) for line in lines] == items
    assert path.stat().st_size < 2000  # compressed, not copied
    assert not list(tmp_path.glob("*.part"))


async def test_gzip_options_and_batches_compress_each_batch(tmp_path: Path) -> None:
    uri = str(tmp_path / "out-%(batch_id)d.jsonl.gz")
    await export(
        uri,
        [{"n": n} for n in range(5)],
        format="jsonl",
        batch_item_count=2,
        postprocessing=["gzip"],
        gzip_compresslevel=1,
        gzip_mtime=0,
    )
    got = [gzip.decompress(p.read_bytes()).decode() for p in listing(tmp_path, "*.gz")]
    assert got == ['{"n":0}\n{"n":1}\n', '{"n":2}\n{"n":3}\n', '{"n":4}\n']


def test_feed_tempdir_must_be_a_folder(tmp_path: Path) -> None:
    settings = {"FEED_TEMPDIR": str(tmp_path / "missing")}
    with pytest.raises(ConfigError, match="FEED_TEMPDIR"):
        parse_feeds(
            {"out.jsonl.gz": {"format": "jsonl", "postprocessing": ["gzip"]}}, settings=settings
        )
    assert parse_feeds({"out.jsonl": {}}, settings=settings)  # only staged feeds use it


def test_a_compressed_feed_is_not_appended_to(tmp_path: Path) -> None:
    path = tmp_path / "out.jsonl.gz"
    path.write_bytes(b"old")
    with pytest.raises(ConfigError, match="cannot be continued"):
        feed_for(str(path), format="jsonl", postprocessing=["gzip"])


class OnlyBooks:
    def __init__(self, feed_options: dict[str, Any]) -> None:
        self.options = feed_options

    def accepts(self, item: Any) -> bool:
        return isinstance(item, Book)


async def test_item_filter_chooses_what_a_feed_gets(tmp_path: Path) -> None:
    path = tmp_path / "out.jsonl"
    await export(str(path), [{"n": 1}, Book("t", [])], item_filter=f"{__name__}.OnlyBooks")
    assert path.read_text() == '{"title":"t","tags":[]}\n'


@pytest.mark.parametrize(("store_empty", "exists"), [(True, True), (False, False)])
async def test_store_empty(tmp_path, store_empty, exists) -> None:
    path = tmp_path / "out.json"
    await export(str(path), [], store_empty=store_empty)
    assert path.exists() is exists


def params(params: dict[str, Any], spider: Any) -> dict[str, Any]:
    return {**params, "site": "books"}


async def test_uri_params_and_spider_attributes_fill_placeholders(tmp_path, make_crawler) -> None:
    crawler = make_crawler(
        FEEDS={str(tmp_path / "%(site)s-%(name)s-%(region)s.jsonl"): {}},
        FEED_URI_PARAMS=f"{__name__}.params",
    )
    crawler.spider = type("S", (), {"name": "shop", "region": "eu"})()
    [feed] = build_feeds(crawler)
    feed.open_spider(None)
    feed.process_item({"a": 1}, None)
    feed.close_spider(None)
    assert (tmp_path / "books-shop-eu.jsonl").read_text() == '{"a":1}\n'


async def test_feed_export_defaults_apply_unless_a_feed_sets_its_own(tmp_path) -> None:
    settings = {"FEED_EXPORT_FIELDS": ["b"], "FEED_EXPORT_INDENT": 2}
    path = tmp_path / "out.json"
    feed = feed_for(str(path), settings=settings)
    assert feed.options.fields == ("b",) and feed.options.indent == 2
    feed = feed_for(str(path), settings=settings, fields=["a"], indent=None)
    assert feed.options.fields == ("a",) and feed.options.indent is None


async def test_csv_joins_lists_of_strings_like_scrapy(tmp_path: Path) -> None:
    path = tmp_path / "out.csv"
    await export(str(path), [{"tags": ["a", "b"], "n": (1, 2)}])
    assert path.read_bytes().decode() == 'tags,n\r\n"a,b","[1,2]"\r\n'


class Pages(Spider):
    """20 pages (data: URLs), one item each."""

    name = "pages"
    allowed_schemes = ["data"]

    def start_requests(self) -> Any:
        for n in range(20):
            yield Request(f"data:,{n}")

    def parse(self, response: Any) -> Any:
        yield {"n": int(response.text)}


def batch_contents(folder: Path, fmt: str) -> list[list[int]]:
    out = []
    for path in listing(folder, f"part-*.{fmt}"):
        if fmt == "json":
            out.append([row["n"] for row in json.loads(path.read_text())])
        else:
            out.append([json.loads(line)["n"] for line in path.read_text().splitlines()])
    return out


@pytest.mark.parametrize("fmt", ["jsonl", "json"])
async def test_a_batched_feed_resumes_in_the_batch_its_job_was_in(tmp_path, fmt) -> None:
    out = tmp_path / "out"
    feeds = {str(out / f"part-%(batch_id)02d.{fmt}"): {"batch_item_count": 3}}
    settings = {"FEEDS": feeds, "CONCURRENT_REQUESTS": 1}
    job = tmp_path / "job"
    await Crawler(Pages, {**settings, "CLOSESPIDER_ITEMCOUNT": 5}, job_dir=job).run()
    first = batch_contents(out, fmt)
    assert len(first) == 2 and len(first[0]) == 3  # stopped inside the second batch
    await Crawler(Pages, settings, job_dir=job).run()
    batches = batch_contents(out, fmt)
    assert sorted(n for batch in batches for n in batch) == list(range(20))  # once each
    assert [len(batch) for batch in batches] == [3, 3, 3, 3, 3, 3, 2]


def gz_batches(folder: Path) -> list[list[int]]:
    return [
        [json.loads(line)["n"] for line in gzip.decompress(path.read_bytes()).splitlines()]
        for path in listing(folder, "part-*.jsonl.gz")
    ]


async def test_a_compressed_batch_stored_before_a_stop_is_replaced_on_resume(tmp_path) -> None:
    out = tmp_path / "out"
    uri = str(out / "part-%(batch_id)02d.jsonl.gz")
    feeds = {uri: {"batch_item_count": 3, "format": "jsonl", "postprocessing": ["gzip"]}}
    settings = {"FEEDS": feeds, "CONCURRENT_REQUESTS": 1}
    job = tmp_path / "job"
    await Crawler(Pages, {**settings, "CLOSESPIDER_ITEMCOUNT": 5}, job_dir=job).run()
    assert [len(batch) for batch in gz_batches(out)] == [3, 2]  # the second stored early
    await Crawler(Pages, settings, job_dir=job).run()
    batches = gz_batches(out)
    assert sorted(n for batch in batches for n in batch) == list(range(20))
    assert [len(batch) for batch in batches] == [3, 3, 3, 3, 3, 3, 2]


def test_a_percent_beside_placeholders_is_kept_and_a_file_uri_is_decoded(tmp_path) -> None:
    """Scrapy 2.13+: a '%' that is no placeholder stays as written (a percent-encoded
    path or password); '%%', the older way to write one, still stands for one."""
    folder = tmp_path / "dir with spaces"
    uri = f"{folder.as_uri()}/100%/%(name)s-%(batch_id)02d.json"
    [feed] = parse_feeds({uri: {"batch_item_count": 1}}, spider_name="shop")
    assert feed.local_path(feed.target({"batch_id": 3})) == folder / "100%" / "shop-03.json"
    [older] = parse_feeds({"out-100%%-%(name)s.json": {}}, spider_name="shop")
    assert older.path == Path("out-100%-shop.json")
