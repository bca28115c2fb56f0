"""Media tasks across a stopped and resumed job, on S3 (moto's server on 127.0.0.1),
with items of other classes, redirects, and what is refused at start."""

from __future__ import annotations

import dataclasses
import hashlib
import json
import logging
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from moto.server import ThreadedMotoServer

from skitter import Crawler, Request, Spider
from skitter.exceptions import ConfigError, CrawlFailed
from skitter.item import Field, Item
from skitter.pipelines.files import FilesPipeline
from skitter.pipelines.images import ImagesPipeline

from ._media_site import FAST, ItemsSpider, MediaSite, crawl, jpeg

FILES = {FilesPipeline: 300}


def md5(data: bytes) -> str:
    return hashlib.md5(data).hexdigest()


async def test_a_stopped_job_resumes_and_every_item_comes_out_once_with_its_files(
    serve: Any, tmp_path: Path
) -> None:
    files = {f"/f{i}.jpg": ("image/jpeg", jpeg(20 + i, 20)) for i in range(16)}
    site = MediaSite(files)
    base = await serve(site.app)
    site.items = [
        {"n": i, "image_urls": [f"{base}/f{2 * i}.jpg", f"{base}/f{2 * i + 1}.jpg"]}
        for i in range(8)
    ]
    out = tmp_path / "out.jsonl"
    settings = {
        "BASE": base,
        "ITEM_PIPELINES": {ImagesPipeline: 300},
        "IMAGES_STORE": str(tmp_path / "store"),
        "FEEDS": {str(out): {}},
        "CONCURRENT_REQUESTS": 2,
    }
    job = tmp_path / "job"
    # Stopped after 6 responses: the page and 5 images, so some chains are half done.
    first, stats = await crawl({**settings, "CLOSESPIDER_PAGECOUNT": 6}, job_dir=job)
    assert stats["finish_reason"] == "closespider_pagecount"
    assert len(first) < 8
    half_done = [
        i for i in range(8) if site.hits[f"/f{2 * i}.jpg"] != site.hits[f"/f{2 * i + 1}.jpg"]
    ]
    assert half_done  # stopped between an item's first and second image
    second, _stats = await crawl(settings, job_dir=job)
    written = [json.loads(line) for line in out.read_text().splitlines()]
    assert sorted(item["n"] for item in written) == list(range(8))  # each once
    assert len(first) + len(second) == 8
    for item in written:
        urls = [f"{base}/f{2 * item['n']}.jpg", f"{base}/f{2 * item['n'] + 1}.jpg"]
        assert [image["url"] for image in item["images"]] == urls
        for image in item["images"]:
            stored = (tmp_path / "store" / image["path"]).read_bytes()
            assert image["checksum"] == md5(stored)
    assert sum(site.hits[path] for path in files) == 16  # no image fetched twice


@pytest.fixture
def s3_endpoint() -> Iterator[str]:
    server = ThreadedMotoServer(ip_address="127.0.0.1", port=0, verbose=False)
    server.start()
    host, port = server.get_host_and_port()
    try:
        yield f"http://{host}:{port}"
    finally:
        server.stop()


async def test_files_go_to_s3_with_their_checksums_and_fresh_ones_stay(
    serve: Any, tmp_path: Path, s3_endpoint: str
) -> None:
    from aiobotocore.session import get_session

    site = MediaSite({"/doc.txt": ("text/plain", b"on s3"), "/p.jpg": ("image/jpeg", jpeg(9, 9))})
    base = await serve(site.app)
    site.items = [{"file_urls": [f"{base}/doc.txt", f"{base}/p.jpg"]}]
    aws = {"AWS_ENDPOINT_URL": s3_endpoint, "AWS_ACCESS_KEY_ID": "testing",
           "AWS_SECRET_ACCESS_KEY": "testing", "AWS_REGION_NAME": "us-east-1"}  # fmt: skip
    client_args = {"endpoint_url": s3_endpoint, "region_name": "us-east-1",
                   "aws_access_key_id": "testing", "aws_secret_access_key": "testing"}  # fmt: skip
    async with get_session().create_client("s3", **client_args) as client:
        await client.create_bucket(Bucket="media")
        settings = {"BASE": base, "ITEM_PIPELINES": FILES, "FILES_STORE_S3_ACL": "public-read",
                    "FILES_STORE": "s3://media/crawl/files", **aws}  # fmt: skip
        [item], _stats = await crawl(settings)
        assert [f["status"] for f in item["files"]] == ["downloaded", "downloaded"]
        for stored, body in zip(item["files"], (b"on s3", jpeg(9, 9)), strict=True):
            key = f"crawl/files/{stored['path']}"
            got = await client.get_object(Bucket="media", Key=key)
            assert await got["Body"].read() == body
            assert stored["checksum"] == md5(body)
            assert got["CacheControl"] == "max-age=172800"  # Scrapy's HEADERS
            acl = await client.get_object_acl(Bucket="media", Key=key)
            everyone = [
                g for g in acl["Grants"] if g["Grantee"].get("URI", "").endswith("AllUsers")
            ]
            assert [g["Permission"] for g in everyone] == ["READ"]  # FILES_STORE_S3_ACL
        [again], _stats = await crawl(settings)
    assert [f["status"] for f in again["files"]] == ["uptodate", "uptodate"]
    assert [f["checksum"] for f in again["files"]] == [md5(b"on s3"), md5(jpeg(9, 9))]
    assert site.hits["/doc.txt"] == 1


async def test_a_media_store_uri_gives_its_s3_keys_and_never_shows_them(
    serve: Any, tmp_path: Path, s3_endpoint: str, monkeypatch: pytest.MonkeyPatch, caplog: Any
) -> None:
    """``s3://KEY:SECRET@bucket/prefix``, as a feed URI: the keys are the client's (no
    other credentials anywhere), the bucket is the host, and no message shows them."""
    from aiobotocore.session import get_session

    for name in ("AWS_ACCESS_KEY_ID", "AWS_SECRET_ACCESS_KEY", "AWS_SESSION_TOKEN"):
        monkeypatch.delenv(name, raising=False)
    monkeypatch.setenv("AWS_SHARED_CREDENTIALS_FILE", str(tmp_path / "none"))
    monkeypatch.setenv("AWS_CONFIG_FILE", str(tmp_path / "none"))
    site = MediaSite({"/doc.txt": ("text/plain", b"on s3")})
    base = await serve(site.app)
    site.items = [{"file_urls": [f"{base}/doc.txt"]}]
    secret = "wJal/rXUt"
    client_args = {"endpoint_url": s3_endpoint, "region_name": "us-east-1",
                   "aws_access_key_id": "testing", "aws_secret_access_key": "testing"}  # fmt: skip
    async with get_session().create_client("s3", **client_args) as client:
        await client.create_bucket(Bucket="media")
        store = f"s3://testing:{secret.replace('/', '%2F')}@media/crawl"
        settings = {"BASE": base, "ITEM_PIPELINES": FILES, "FILES_STORE": store,
                    "AWS_ENDPOINT_URL": s3_endpoint, "AWS_REGION_NAME": "us-east-1"}  # fmt: skip
        with caplog.at_level(logging.DEBUG):
            [item], _stats = await crawl(settings)
        [stored] = item["files"]
        got = await client.get_object(Bucket="media", Key=f"crawl/{stored['path']}")
        assert await got["Body"].read() == b"on s3"
        settings["FILES_STORE"] = f"s3://testing:{secret.replace('/', '%2F')}@nobucket/crawl"
        with caplog.at_level(logging.DEBUG), pytest.raises(CrawlFailed) as raised:
            await crawl(settings)
    assert "media store s3://nobucket/crawl" in raised.value.reason
    for shown in (caplog.text, raised.value.reason):
        assert "wJal" not in shown and "rXUt" not in shown


class Product(Item):
    name = Field()
    file_urls = Field()
    files = Field()


@dataclasses.dataclass
class Record:
    name: str
    file_urls: list[str]
    files: list[dict[str, Any]] = dataclasses.field(default_factory=list)


class TypedSpider(Spider):
    name = "typed"

    def start_requests(self) -> Any:
        yield Request(self.settings["BASE"] + "/items")

    def parse(self, response: Any) -> Any:
        base = self.settings["BASE"]
        yield Product(name="p", file_urls=[f"{base}/a.txt"])
        yield Record(name="r", file_urls=[f"{base}/a.txt", f"{base}/b.txt"])


async def test_items_come_back_as_their_class(serve: Any, tmp_path: Path) -> None:
    site = MediaSite({"/a.txt": ("text/plain", b"a"), "/b.txt": ("text/plain", b"b")})
    base = await serve(site.app)
    settings = {"BASE": base, "ITEM_PIPELINES": FILES, "FILES_STORE": str(tmp_path)}
    items, _stats = await crawl(settings, TypedSpider)
    by_type = {type(item).__name__: item for item in items}
    assert sorted(by_type) == ["Product", "Record"]
    assert [f["url"] for f in by_type["Product"]["files"]] == [f"{base}/a.txt"]
    assert [f["path"] for f in by_type["Record"].files] == [
        f"full/{hashlib.sha1(f'{base}/{n}.txt'.encode()).hexdigest()}.txt" for n in "ab"
    ]


async def test_an_item_that_is_not_plain_data_is_refused_naming_the_field(
    serve: Any, tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    site = MediaSite({"/a.txt": ("text/plain", b"a")})
    base = await serve(site.app)

    class Odd(ItemsSpider):
        def parse(self, response: Any) -> Any:
            yield {"when": {1, 2}, "file_urls": [f"{base}/a.txt"]}

    settings = {"BASE": base, "ITEM_PIPELINES": FILES, "FILES_STORE": str(tmp_path)}
    with caplog.at_level(logging.ERROR):
        items, stats = await crawl(settings, Odd)
    assert items == []
    assert stats["item_error_count"] == 1
    assert "must be plain data" in caplog.text and "'when'" in caplog.text


@pytest.mark.parametrize("allow", [False, True])
async def test_redirects_are_followed_only_with_media_allow_redirects(
    serve: Any, tmp_path: Path, allow: bool
) -> None:
    from aiohttp import web

    site = MediaSite({"/real.txt": ("text/plain", b"real")})

    async def moved(request: web.Request) -> web.StreamResponse:
        raise web.HTTPFound("/real.txt")

    app = web.Application()
    app.router.add_get("/moved.txt", moved)
    app.router.add_get("/{tail:.*}", site.handle)
    base = await serve(app)
    # Two items whose files redirect to one URL: each chain goes on with its own item.
    site.items = [{"n": n, "file_urls": [f"{base}/moved.txt?{n}"]} for n in range(2)]
    settings = {"BASE": base, "ITEM_PIPELINES": FILES, "FILES_STORE": str(tmp_path),
                "MEDIA_ALLOW_REDIRECTS": allow}  # fmt: skip
    items, _stats = await crawl(settings)
    assert sorted(item["n"] for item in items) == [0, 1]
    for item in items:
        if allow:
            [stored] = item["files"]
            assert stored["url"] == f"{base}/moved.txt?{item['n']}"  # the URL asked for
            assert (tmp_path / stored["path"]).read_bytes() == b"real"
        else:
            assert item["files"] == []
    assert site.hits["/real.txt"] == (2 if allow else 0)


async def test_a_pipeline_without_its_store_is_refused_at_start() -> None:
    crawler = Crawler(ItemsSpider, {**FAST, "ITEM_PIPELINES": FILES})
    with pytest.raises(ConfigError, match="FILES_STORE is not set"):
        await crawler.run()


async def test_images_without_pillow_are_refused_at_start(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    monkeypatch.setitem(sys.modules, "PIL", None)
    settings = {**FAST, "ITEM_PIPELINES": {ImagesPipeline: 1}, "IMAGES_STORE": str(tmp_path)}
    with pytest.raises(ConfigError, match=r"pip install 'skitter\[images\]'"):
        await Crawler(ItemsSpider, settings).run()


async def test_an_s3_store_without_aiobotocore_is_refused_at_start(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setitem(sys.modules, "aiobotocore", None)
    settings = {**FAST, "ITEM_PIPELINES": FILES, "FILES_STORE": "s3://bucket/files"}
    with pytest.raises(ConfigError, match=r"pip install 'skitter\[s3\]'"):
        await Crawler(ItemsSpider, settings).run()


class TokenFiles(FilesPipeline):
    def get_media_requests(self, item: Any, info: Any) -> list[Request]:
        headers = {"Authorization": "Bearer s3cret-token", "X-Keep": "kept"}
        return [Request(url, headers=headers) for url in item["file_urls"]]


async def test_no_secret_header_of_a_media_request_is_stored_with_its_chain(
    serve: Any, tmp_path: Path
) -> None:
    from aiohttp import web

    seen: list[tuple[str | None, str | None]] = []
    site = MediaSite({})

    async def file(request: web.Request) -> web.StreamResponse:
        seen.append((request.headers.get("Authorization"), request.headers.get("X-Keep")))
        return web.Response(body=b"x", content_type="text/plain")

    app = web.Application()
    app.router.add_get("/items", site.handle)
    app.router.add_get("/{name}.txt", file)
    base = await serve(app)
    site.items = [{"file_urls": [f"{base}/{n}.txt" for n in range(4)]}]
    job = tmp_path / "job"
    settings = {"BASE": base, "ITEM_PIPELINES": {TokenFiles: 300},
                "FILES_STORE": str(tmp_path / "store"), "CLOSESPIDER_PAGECOUNT": 2,
                "CONCURRENT_REQUESTS": 1}  # fmt: skip
    await crawl(settings, job_dir=job)
    stored = b"".join(path.read_bytes() for path in job.rglob("*") if path.is_file())
    assert b"kept" in stored  # the chain is in the job, with its ordinary headers
    assert b"s3cret" not in stored
    # held in this process's memory, the token still goes with every file's download
    assert seen and all(header == ("Bearer s3cret-token", "kept") for header in seen)


async def test_an_item_yielded_by_start_gets_its_files(serve: Any, tmp_path: Path) -> None:
    site = MediaSite({"/a.txt": ("text/plain", b"a")})
    base = await serve(site.app)

    class StartItems(Spider):
        name = "start-items"

        async def start(self) -> Any:
            yield {"name": "from start", "file_urls": [f"{base}/a.txt"]}

    settings = {"ITEM_PIPELINES": FILES, "FILES_STORE": str(tmp_path)}
    [item], _stats = await crawl(settings, StartItems)
    assert [f["status"] for f in item["files"]] == ["downloaded"]
    assert (tmp_path / item["files"][0]["path"]).read_bytes() == b"a"


async def test_a_store_that_cannot_be_written_fails_the_crawl_and_a_resume_finishes(
    serve: Any, tmp_path: Path
) -> None:
    from skitter.exceptions import CrawlFailed

    site = MediaSite({"/a.txt": ("text/plain", b"a")})
    base = await serve(site.app)
    site.items = [{"name": "kept", "file_urls": [f"{base}/a.txt"]}]
    store = tmp_path / "store"
    store.mkdir()
    (store / "full").write_text("a file where the directory should be")
    out = tmp_path / "out.jsonl"
    job = tmp_path / "job"
    settings = {"BASE": base, "ITEM_PIPELINES": FILES, "FILES_STORE": str(store),
                "FEEDS": {str(out): {}}}  # fmt: skip
    with pytest.raises(CrawlFailed) as failed:
        await crawl(settings, job_dir=job)
    assert f"media store {store}" in failed.value.reason
    assert out.read_text() == ""  # the item is not written without its file
    (store / "full").unlink()
    [item], stats = await crawl(settings, job_dir=job)
    assert stats["finish_reason"] == "finished"
    assert (store / item["files"][0]["path"]).read_bytes() == b"a"
    assert [json.loads(line)["name"] for line in out.read_text().splitlines()] == ["kept"]


@pytest.mark.parametrize(
    ("settings", "message"),
    [
        ({"ITEM_PIPELINES": FILES, "FILES_STORE": "gs://bucket/files"}, "gs:// media stores"),
        (
            {
                "ITEM_PIPELINES": {ImagesPipeline: 1},
                "IMAGES_STORE": "images",
                "IMAGES_THUMBS": {"small": 50},
            },
            r"IMAGES_THUMBS\['small'\] must be \(width, height\)",
        ),
    ],
    ids=["gcs", "thumbs"],
)
async def test_a_store_or_thumbnail_skitter_cannot_honour_is_refused_at_start(
    settings: dict[str, Any], message: str
) -> None:
    with pytest.raises(ConfigError, match=message):
        await Crawler(ItemsSpider, {**FAST, **settings}).run()
