"""Files and images pipelines over a real site: store layout, checksums, thumbnails,
expiry, the size limit, slot concurrency and scope (media downloads are crawl tasks)."""

from __future__ import annotations

import hashlib
import logging
import os
import time
from pathlib import Path
from typing import Any

import pytest
from PIL import Image

from skitter import Request
from skitter.pipelines.files import FilesPipeline
from skitter.pipelines.images import ImagesPipeline

from ._media_site import ItemsSpider, MediaSite, crawl, jpeg, png

FILES = {FilesPipeline: 300}
IMAGES = {ImagesPipeline: 300}


def sha1(text: str) -> str:
    return hashlib.sha1(text.encode()).hexdigest()


def md5(data: bytes) -> str:
    return hashlib.md5(data).hexdigest()


async def test_files_are_stored_under_the_sha1_of_their_url_with_their_md5(
    serve: Any, tmp_path: Path
) -> None:
    doc, photo = b"hello, files\n", jpeg(40, 30)
    site = MediaSite({"/doc.txt": ("text/plain", doc), "/a/photo.jpg": ("image/jpeg", photo)})
    base = await serve(site.app)
    site.items = [{"name": "one", "file_urls": [f"{base}/doc.txt", f"{base}/a/photo.jpg"]},
                  {"name": "none", "file_urls": []}]  # fmt: skip
    store = tmp_path / "store"
    items, stats = await crawl({"BASE": base, "ITEM_PIPELINES": FILES, "FILES_STORE": str(store)})
    by_name = {item["name"]: item for item in items}
    assert sorted(by_name) == ["none", "one"]
    assert by_name["none"]["files"] == []
    files = by_name["one"]["files"]
    assert files == [
        {"url": f"{base}/doc.txt", "path": f"full/{sha1(base + '/doc.txt')}.txt",
         "checksum": md5(doc), "status": "downloaded"},
        {"url": f"{base}/a/photo.jpg", "path": f"full/{sha1(base + '/a/photo.jpg')}.jpg",
         "checksum": md5(photo), "status": "downloaded"},
    ]  # fmt: skip
    assert (store / files[0]["path"]).read_bytes() == doc
    assert (store / files[1]["path"]).read_bytes() == photo
    assert stats["file_status_count/downloaded"] == 2
    assert stats["item_scraped_count"] == 2


async def test_images_are_stored_as_jpeg_with_thumbnails_and_small_ones_left_out(
    serve: Any, tmp_path: Path
) -> None:
    site = MediaSite({
        "/big.png": ("image/png", png(200, 100)),
        "/tiny.png": ("image/png", png(10, 10)),
        "/photo.jpg": ("image/jpeg", jpeg(60, 120)),
    })  # fmt: skip
    base = await serve(site.app)
    urls = [f"{base}/big.png", f"{base}/tiny.png", f"{base}/photo.jpg"]
    site.items = [{"name": "pics", "image_urls": urls}]
    store = tmp_path / "images"
    settings = {
        "BASE": base,
        "ITEM_PIPELINES": IMAGES,
        "IMAGES_STORE": str(store),
        "IMAGES_THUMBS": {"small": (50, 50), "wide": (100, 20)},
        "IMAGES_MIN_WIDTH": 20,
        "IMAGES_MIN_HEIGHT": 20,
    }
    items, stats = await crawl(settings)
    [item] = items
    images = item["images"]
    assert [image["url"] for image in images] == [urls[0], urls[2]]  # tiny.png is too small
    assert stats["image_status_count/failed"] == 1
    for image in images:
        assert image["path"] == f"full/{sha1(image['url'])}.jpg"
        stored = (store / image["path"]).read_bytes()
        assert image["checksum"] == md5(stored)
        with Image.open(store / image["path"]) as full:
            assert (full.format, full.mode) == ("JPEG", "RGB")
    with Image.open(store / images[0]["path"]) as full:
        assert full.size == (200, 100)
        red, green, _blue = full.getpixel((5, 5))
        assert red > 200 and green > 100  # half-transparent red on white, not on black
    # A JPEG in RGB is kept as downloaded.
    assert (store / images[1]["path"]).read_bytes() == jpeg(60, 120)
    expected = {"small": {urls[0]: (50, 25), urls[2]: (25, 50)},
                "wide": {urls[0]: (40, 20), urls[2]: (10, 20)}}  # fmt: skip
    for thumb, sizes in expected.items():
        for url, size in sizes.items():
            with Image.open(store / "thumbs" / thumb / f"{sha1(url)}.jpg") as image:
                assert (image.format, image.size) == ("JPEG", size)
    assert not (store / "thumbs" / "small" / f"{sha1(urls[1])}.jpg").exists()


async def test_fresh_files_are_not_fetched_again_and_expired_ones_are(
    serve: Any, tmp_path: Path
) -> None:
    site = MediaSite({"/a.txt": ("text/plain", b"a"), "/b.txt": ("text/plain", b"b")})
    base = await serve(site.app)
    site.items = [{"file_urls": [f"{base}/a.txt", f"{base}/b.txt"]}]
    store = tmp_path / "store"
    settings = {"BASE": base, "ITEM_PIPELINES": FILES, "FILES_STORE": str(store),
                "FILES_EXPIRES": 30}  # fmt: skip
    await crawl(settings)
    assert site.hits["/a.txt"] == site.hits["/b.txt"] == 1
    # Stored just now: up to date, not fetched again.
    [item], stats = await crawl(settings)
    assert [f["status"] for f in item["files"]] == ["uptodate", "uptodate"]
    assert [f["checksum"] for f in item["files"]] == [md5(b"a"), md5(b"b")]
    assert site.hits["/a.txt"] == site.hits["/b.txt"] == 1
    assert stats["file_status_count/uptodate"] == 2
    # a.txt stored 31 days ago: expired, fetched again; b.txt 29 days ago: still fresh.
    day = 86400
    os.utime(store / item["files"][0]["path"], (time.time() - 31 * day,) * 2)
    os.utime(store / item["files"][1]["path"], (time.time() - 29 * day,) * 2)
    [item], _stats = await crawl(settings)
    assert [f["status"] for f in item["files"]] == ["downloaded", "uptodate"]
    assert site.hits["/a.txt"] == 2 and site.hits["/b.txt"] == 1


@pytest.mark.parametrize(
    ("path", "maxsize"), [("/huge.jpg", None), ("/endless.jpg", 1_000_000)], ids=["1GiB", "endless"]
)
async def test_an_image_over_download_maxsize_is_refused_and_the_item_goes_on(
    serve: Any, tmp_path: Path, caplog: pytest.LogCaptureFixture, path: str, maxsize: int | None
) -> None:
    site = MediaSite({"/ok.jpg": ("image/jpeg", jpeg(30, 30))})
    base = await serve(site.app)
    site.items = [{"name": "big", "image_urls": [f"{base}{path}", f"{base}/ok.jpg"]}]
    settings: dict[str, Any] = {"BASE": base, "ITEM_PIPELINES": IMAGES,
                                "IMAGES_STORE": str(tmp_path / "store")}  # fmt: skip
    if maxsize is not None:
        settings["DOWNLOAD_MAXSIZE"] = maxsize
    with caplog.at_level(logging.WARNING):
        [item], stats = await crawl(settings)
    assert [image["url"] for image in item["images"]] == [f"{base}/ok.jpg"]
    assert stats["image_status_count/failed"] == 1
    assert "DOWNLOAD_MAXSIZE" in caplog.text
    assert not (tmp_path / "store" / "full" / f"{sha1(base + path)}.jpg").exists()


async def test_media_downloads_obey_the_slot_concurrency_and_the_scope(
    serve: Any, tmp_path: Path
) -> None:
    files = {f"/f{i}.txt": ("text/plain", f"file {i}".encode()) for i in range(12)}
    site = MediaSite(files, delay=0.02)
    base = await serve(site.app)
    port = base.rsplit(":", 1)[1]
    site.items = [
        {"n": i, "file_urls": [f"{base}/f{2 * i}.txt", f"{base}/f{2 * i + 1}.txt"]}
        for i in range(6)
    ]
    offsite = f"http://localhost:{port}/f0.txt"
    site.items.append({"n": 99, "file_urls": [offsite]})

    class Scoped(ItemsSpider):
        allowed_domains = ["127.0.0.1"]

    settings = {"BASE": base, "ITEM_PIPELINES": FILES, "FILES_STORE": str(tmp_path / "s"),
                "CONCURRENT_REQUESTS": 16, "CONCURRENT_REQUESTS_PER_DOMAIN": 1}  # fmt: skip
    items, stats = await crawl(settings, Scoped)
    by_n = {item["n"]: item for item in items}
    assert sorted(by_n) == [*range(6), 99]
    assert all(len(by_n[i]["files"]) == 2 for i in range(6))
    assert site.max_active == 1  # twelve files, one at a time, as the slot allows
    assert by_n[99]["files"] == []  # refused by the scope check, never requested
    assert site.hosts["localhost"] == 0
    assert stats["file_status_count/failed"] == 1


async def test_a_file_twice_is_fetched_once_and_failures_and_retries_are_the_crawls(
    serve: Any, tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    from aiohttp import web

    site = MediaSite({"/shared.txt": ("text/plain", b"shared")})
    flaky_hits = 0

    async def flaky(request: web.Request) -> web.StreamResponse:
        nonlocal flaky_hits
        flaky_hits += 1
        if flaky_hits == 1:
            return web.Response(status=503, text="busy")
        return web.Response(body=b"second try", content_type="text/plain")

    app = web.Application()
    app.router.add_get("/flaky.txt", flaky)
    app.router.add_get("/{tail:.*}", site.handle)
    base = await serve(app)
    site.items = [
        {"n": 0, "file_urls": [f"{base}/shared.txt", f"{base}/missing.txt", f"{base}/flaky.txt"]},
        {"n": 2, "file_urls": f"{base}/shared.txt"},  # a string, not a list
    ]

    class Later(ItemsSpider):
        def parse(self, response: Any) -> Any:
            yield from super().parse(response)
            # Queued below the media requests: fetched once item 0's files are in.
            yield Request(f"{base}/items?later", callback=self.parse_later)

        def parse_later(self, response: Any) -> Any:
            yield {"n": 1, "file_urls": [f"{base}/shared.txt"]}

    settings = {"BASE": base, "ITEM_PIPELINES": FILES, "FILES_STORE": str(tmp_path),
                "CONCURRENT_REQUESTS": 1}  # fmt: skip
    with caplog.at_level(logging.WARNING):
        items, stats = await crawl(settings, Later)
    by_n = {item["n"]: item for item in items}
    assert sorted(by_n) == [0, 1]  # n=2 is refused, as an item error naming the field
    assert "file_urls must be a list of URLs" in caplog.text
    assert stats["item_error_count"] == 1
    assert [f["url"] for f in by_n[0]["files"]] == [f"{base}/shared.txt", f"{base}/flaky.txt"]
    assert "File (code: 404)" in caplog.text
    assert flaky_hits == 2  # a 503 is retried like any page
    assert [f["status"] for f in by_n[1]["files"]] == ["cached"]
    assert by_n[1]["files"][0]["path"] == by_n[0]["files"][0]["path"]
    assert site.hits["/shared.txt"] == 1


async def test_the_same_file_stored_at_once_by_many_items_is_stored_whole(
    tmp_path: Path,
) -> None:
    """Items that share a file store it concurrently (a thread each): every write has
    its own partial file, so no rename moves another's away (a shared one did, and the
    crawl failed with 'No such file or directory')."""
    import asyncio

    from skitter.pipelines._media_store import FSFilesStore

    store = FSFilesStore(tmp_path)
    store.open()
    path = "full/shared.txt"
    data = b"x" * 65536
    await asyncio.gather(*(asyncio.to_thread(store.persist_file, path, data) for _ in range(32)))
    assert (tmp_path / path).read_bytes() == b"x" * 65536
    assert os.listdir(tmp_path / "full") == ["shared.txt"]  # no partial file left behind
