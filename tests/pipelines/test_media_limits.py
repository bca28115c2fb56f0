"""Image decompression bombs (issue 27): the pixel count is checked from the header
before anything is decoded, against IMAGES_MAX_PIXELS; Pillow's own bomb warning is an
error; a refused image is logged, counted and not stored, and the item goes on."""

from __future__ import annotations

import hashlib
import logging
import struct
import warnings
import zlib
from pathlib import Path
from typing import Any

import pytest
from PIL import Image

from skitter import Request, Response
from skitter.exceptions import ConfigError
from skitter.pipelines._images import ImageException
from skitter.pipelines.images import ImagesPipeline
from skitter.pipelines.media import MediaPipeline
from skitter.utils.test import get_crawler

from ._media_site import MediaSite, crawl, png

IMAGES = {ImagesPipeline: 300}


def blank_png(width: int, height: int) -> bytes:
    """A valid one-bit PNG of ``width`` x ``height`` black pixels: a few kilobytes that
    decode to ``width * height`` pixels (a grey or colour copy of it is 1-4 bytes each)."""

    def chunk(kind: bytes, data: bytes) -> bytes:
        crc = zlib.crc32(kind + data)
        return struct.pack(">I", len(data)) + kind + data + struct.pack(">I", crc)

    rows = (b"\x00" * (1 + (width + 7) // 8)) * height
    header = struct.pack(">IIBBBBB", width, height, 1, 0, 0, 0, 0)
    return b"".join(
        [b"\x89PNG\r\n\x1a\n", chunk(b"IHDR", header), chunk(b"IDAT", zlib.compress(rows, 9)),
         chunk(b"IEND", b"")]
    )  # fmt: skip


def sha1(text: str) -> str:
    return hashlib.sha1(text.encode()).hexdigest()


async def test_a_decompression_bomb_is_refused_by_default_before_it_is_decoded(
    serve: Any, tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    """The issue's image, 9500x9500 pixels in a few kilobytes (over Pillow's limit too),
    and a 6000x5000 one (under Pillow's, which only warns up to 89 MP and errs from
    179 MP): both refused from their header by IMAGES_MAX_PIXELS (25 MP by default),
    counted and logged; the item's small image is stored and the item goes on."""
    bomb, big = blank_png(9500, 9500), blank_png(6000, 5000)
    assert len(bomb) < 40_000 and len(big) < 40_000
    site = MediaSite({
        "/bomb.png": ("image/png", bomb),
        "/big.png": ("image/png", big),
        "/ok.png": ("image/png", png(40, 30)),
    })  # fmt: skip
    base = await serve(site.app)
    urls = [f"{base}/bomb.png", f"{base}/big.png", f"{base}/ok.png"]
    site.items = [{"name": "x", "image_urls": urls}]
    store = tmp_path / "store"
    with caplog.at_level(logging.WARNING):
        [item], stats = await crawl(
            {"BASE": base, "ITEM_PIPELINES": IMAGES, "IMAGES_STORE": str(store)}
        )
    assert [image["url"] for image in item["images"]] == [f"{base}/ok.png"]
    assert stats["images/too_many_pixels"] == 2
    assert stats["image_status_count/failed"] == 2
    assert "Image too large: Image size (90250000 pixels) exceeds limit" in caplog.text
    assert "6000x5000 = 30,000,000 pixels > IMAGES_MAX_PIXELS 25,000,000" in caplog.text
    assert sorted(p.name for p in (store / "full").iterdir()) == [f"{sha1(urls[2])}.jpg"]
    assert stats["finish_reason"] == "finished"


async def test_images_max_pixels_is_the_limit(serve: Any, tmp_path: Path) -> None:
    """At the limit an image is stored; one pixel row more and it is not, whatever the
    file's size."""
    site = MediaSite({
        "/at.png": ("image/png", png(1000, 100)),
        "/over.png": ("image/png", blank_png(1000, 101)),
    })  # fmt: skip
    base = await serve(site.app)
    site.items = [{"image_urls": [f"{base}/at.png", f"{base}/over.png"]}]
    store = tmp_path / "store"
    settings = {"BASE": base, "ITEM_PIPELINES": IMAGES, "IMAGES_STORE": str(store),
                "IMAGES_MAX_PIXELS": 100_000}  # fmt: skip
    [item], stats = await crawl(settings)
    assert [image["url"] for image in item["images"]] == [f"{base}/at.png"]
    assert stats["images/too_many_pixels"] == 1
    assert sorted(p.name for p in (store / "full").iterdir()) == [f"{sha1(base + '/at.png')}.jpg"]


def pipeline(tmp_path: Path, **settings: Any) -> ImagesPipeline:
    crawler = get_crawler(None, {"IMAGES_STORE": str(tmp_path), **settings})
    pipe: ImagesPipeline = ImagesPipeline.from_crawler(crawler)
    return pipe


def images_of(mw: ImagesPipeline, body: bytes) -> list[Any]:
    request = Request("http://example.com/a.png")
    response = Response(request.url, 200, {"Content-Type": "image/png"}, body, request)
    return list(mw.get_images(response, request, MediaPipeline.SpiderInfo(None)))


def test_pillows_decompression_bomb_warning_is_an_error(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Outside the tests, warnings are only printed: Pillow's bomb warning would let the
    image through. The pipeline makes it an error (Pillow's limit lowered below the
    image here, as a program may do)."""
    with warnings.catch_warnings():
        warnings.simplefilter("default")
        mw = pipeline(tmp_path)
        monkeypatch.setattr(Image, "MAX_IMAGE_PIXELS", 50_000)
        with pytest.raises(ImageException, match="decompression bomb"):
            images_of(mw, blank_png(300, 200))
        assert len(images_of(mw, png(200, 200))) == 1


def test_a_setting_above_pillows_limit_raises_it_and_nonsense_is_refused(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(Image, "MAX_IMAGE_PIXELS", 89_478_485)
    pipeline(tmp_path, IMAGES_MAX_PIXELS=1_000)
    assert Image.MAX_IMAGE_PIXELS == 89_478_485  # a lower setting leaves Pillow's alone
    pipeline(tmp_path, IMAGES_MAX_PIXELS=200_000_000)
    assert Image.MAX_IMAGE_PIXELS == 200_000_000
    for bad in (0, -5):
        with pytest.raises(ConfigError, match="IMAGES_MAX_PIXELS must be a positive number"):
            pipeline(tmp_path, IMAGES_MAX_PIXELS=bad)
