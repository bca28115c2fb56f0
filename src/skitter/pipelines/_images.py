"""``ImagesPipeline``: ``image_urls`` stored as JPEG, with thumbnails, in ``images``.

Scrapy's behaviour and layout: ``IMAGES_STORE/full/<sha1 of the URL>.jpg`` and
``thumbs/<name>/<sha1>.jpg`` per IMAGES_THUMBS entry; images are converted to RGB
(transparency onto white) and saved as JPEG, a JPEG in RGB kept as downloaded; an image
narrower than IMAGES_MIN_WIDTH or lower than IMAGES_MIN_HEIGHT is an ``ImageException``
(logged, left out of the results). The checksum is the MD5 of the stored full image.
Pillow (``skitter[images]``) is imported when the pipeline is built, so a crawl without
it is refused at start. Decoding and encoding run in a thread.

A small file can decode to gigabytes (a 22 KB PNG of 9500x9500 pixels takes 400 MB), and
images decode on several threads at once, so the pixel count is checked before anything
is decoded: from the header, against IMAGES_MAX_PIXELS, and again after loading (some
formats choose their size as they load). Pillow's own check is an error too: the
pipeline turns its ``DecompressionBombWarning`` into an exception for the process (a
warning would let the image through), and raises ``PIL.Image.MAX_IMAGE_PIXELS`` to
IMAGES_MAX_PIXELS when that is higher, so that the setting is the limit. A refused image
is logged, counted in ``images/too_many_pixels`` and ``image_status_count/failed``, and
nothing of it is stored.
"""

from __future__ import annotations

import asyncio
import warnings
from collections.abc import Iterator
from io import BytesIO
from pathlib import Path
from typing import Any, ClassVar

from skitter.exceptions import ConfigError
from skitter.http import Request, Response
from skitter.pipelines._files import FilesPipeline, setting_or, url_sha1
from skitter.pipelines._media import FileException
from skitter.pipelines._media_store import md5sum
from skitter.settings import MediaSettings

__all__ = ["ImageException", "ImagesPipeline"]


class ImageException(FileException):
    """An image that cannot be used: too small, too large, or not an image Pillow can read."""


class _TooManyPixels(ImageException):
    """More pixels than IMAGES_MAX_PIXELS (or Pillow's bomb check) allows."""


def _pillow() -> Any:
    try:
        from PIL import Image
    except ImportError:
        raise ConfigError("ImagesPipeline needs Pillow: pip install 'skitter[images]'") from None
    return Image


#: The EXIF tag of an image's orientation (1: upright).
_ORIENTATION = 0x0112


def _lanczos(pil: Any) -> Any:
    """Pillow's Lanczos filter, by its name before Pillow 9.1 too (``ANTIALIAS``)."""
    resampling = getattr(pil, "Resampling", None)
    return resampling.LANCZOS if resampling is not None else pil.ANTIALIAS


def _thumbs(value: Any) -> dict[str, tuple[int, int]]:
    """IMAGES_THUMBS checked: ``{name: (width, height)}``."""
    thumbs: dict[str, tuple[int, int]] = {}
    for name, size in dict(value).items():
        try:
            width, height = (int(side) for side in size)
        except (TypeError, ValueError):
            raise ConfigError(
                f"IMAGES_THUMBS[{name!r}] must be (width, height), got {size!r}"
            ) from None
        thumbs[str(name)] = (width, height)
    return thumbs


def _guard_pillow(pil: Any, max_pixels: Any) -> int:
    """IMAGES_MAX_PIXELS, checked; Pillow's bomb warning made an error and its limit
    raised to the setting when lower (process-wide: Pillow has no other place)."""
    if isinstance(max_pixels, bool) or not isinstance(max_pixels, int) or max_pixels < 1:
        raise ConfigError(f"IMAGES_MAX_PIXELS must be a positive number, not {max_pixels!r}")
    warnings.filterwarnings("error", category=pil.DecompressionBombWarning)
    if pil.MAX_IMAGE_PIXELS is not None and max_pixels > pil.MAX_IMAGE_PIXELS:
        pil.MAX_IMAGE_PIXELS = max_pixels
    return max_pixels


class ImagesPipeline(FilesPipeline):
    """Downloads ``image_urls`` (IMAGES_URLS_FIELD) into IMAGES_STORE; results go to
    ``images`` (IMAGES_RESULT_FIELD). Override ``file_path`` / ``thumb_path``."""

    PREFIX: ClassVar[str] = "IMAGES"
    MEDIA_NAME: ClassVar[str] = "image"
    MIN_WIDTH: ClassVar[int] = 0
    MIN_HEIGHT: ClassVar[int] = 0
    THUMBS: ClassVar[dict[str, tuple[int, int]]] = {}
    DEFAULT_IMAGES_URLS_FIELD: ClassVar[str] = "image_urls"
    DEFAULT_IMAGES_RESULT_FIELD: ClassVar[str] = "images"

    def __init__(
        self,
        store_uri: str | Path,
        download_func: Any = None,
        settings: Any = None,
        *,
        crawler: Any = None,
    ) -> None:
        self._Image = _pillow()
        super().__init__(store_uri, download_func, settings, crawler=crawler)
        own = crawler.settings.view(MediaSettings)
        self.max_pixels = _guard_pillow(self._Image, own.images_max_pixels)

    def _read_settings(self, settings: Any) -> None:
        def value(key: str, fallback: Any) -> Any:
            own_key = self._key_for_pipe(key, "ImagesPipeline", settings)
            return setting_or(settings, own_key, fallback)

        cls = type(self)
        self.expires = int(value("IMAGES_EXPIRES", self.EXPIRES))
        urls = getattr(cls, "IMAGES_URLS_FIELD", self.DEFAULT_IMAGES_URLS_FIELD)
        result = getattr(cls, "IMAGES_RESULT_FIELD", self.DEFAULT_IMAGES_RESULT_FIELD)
        self.IMAGES_URLS_FIELD, self.IMAGES_RESULT_FIELD = urls, result
        self.images_urls_field: str = value("IMAGES_URLS_FIELD", urls)
        self.images_result_field: str = value("IMAGES_RESULT_FIELD", result)
        # The files pipeline's hooks read these names.
        self.files_urls_field, self.files_result_field = (
            self.images_urls_field,
            self.images_result_field,
        )
        self.min_width: int = int(value("IMAGES_MIN_WIDTH", self.MIN_WIDTH))
        self.min_height: int = int(value("IMAGES_MIN_HEIGHT", self.MIN_HEIGHT))
        self.thumbs: dict[str, tuple[int, int]] = _thumbs(value("IMAGES_THUMBS", self.THUMBS))

    def file_path(
        self,
        request: Request,
        response: Response | None = None,
        info: Any = None,
        *,
        item: Any = None,
    ) -> str:
        return f"full/{url_sha1(request.url)}.jpg"

    def thumb_path(
        self,
        request: Request,
        thumb_id: str,
        response: Response | None = None,
        info: Any = None,
        *,
        item: Any = None,
    ) -> str:
        return f"thumbs/{thumb_id}/{url_sha1(request.url)}.jpg"

    async def file_downloaded(
        self, response: Response, request: Request, info: Any, *, item: Any = None
    ) -> str:
        return await self.image_downloaded(response, request, info, item=item)

    async def image_downloaded(
        self, response: Response, request: Request, info: Any, *, item: Any = None
    ) -> str:
        """Store the image and its thumbnails; the checksum of the full image."""
        try:
            images = await asyncio.to_thread(
                lambda: list(self.get_images(response, request, info, item=item))
            )
        except _TooManyPixels:
            self.crawler.stats.inc_value("images/too_many_pixels")
            raise
        checksum: str | None = None
        for path, image, buf in images:
            if checksum is None:
                checksum = md5sum(buf.getvalue())
            width, height = image.size
            await self._store_call(
                "persist_file",
                path,
                buf,
                info,
                meta={"width": width, "height": height},
                headers={"Content-Type": "image/jpeg"},
            )
        assert checksum is not None
        return checksum

    def get_images(
        self, response: Response, request: Request, info: Any, *, item: Any = None
    ) -> Iterator[tuple[str, Any, BytesIO]]:
        """The full image, then each thumbnail: (path, image, JPEG bytes)."""
        path = self.file_path(request, response=response, info=info, item=item)
        original = self._upright(self._decode(response.body))
        width, height = original.size
        if width < self.min_width or height < self.min_height:
            raise ImageException(
                f"Image too small ({width}x{height} < {self.min_width}x{self.min_height})"
            )
        image, buf = self.convert_image(original, response_body=BytesIO(response.body))
        yield path, image, buf
        for thumb_id, size in self.thumbs.items():
            thumb_path = self.thumb_path(request, thumb_id, response=response, info=info, item=item)
            thumb, thumb_buf = self.convert_image(image, size)
            yield thumb_path, thumb, thumb_buf

    def _decode(self, body: bytes) -> Any:
        """The image, loaded only once its header's pixel count has passed the limit
        (and checked again after loading); ImageException when it cannot be had."""
        pil = self._Image
        try:
            image = pil.open(BytesIO(body))
            self._check_pixels(image.size)
            image.load()
        except (pil.DecompressionBombWarning, pil.DecompressionBombError) as exc:
            raise _TooManyPixels(f"Image too large: {exc}") from None
        except ImageException:
            raise
        except Exception as exc:
            raise ImageException(f"not an image: {exc}") from None
        self._check_pixels(image.size)
        return image

    def _upright(self, image: Any) -> Any:
        """A copy of ``image`` turned as its EXIF orientation says; one that needed no
        turning keeps its format, so that a JPEG keeps its bytes."""
        if image.getexif().get(_ORIENTATION, 1) != 1:
            from PIL import ImageOps

            return ImageOps.exif_transpose(image)
        upright = image.copy()
        upright.format = image.format
        return upright

    def _check_pixels(self, size: tuple[int, int]) -> None:
        width, height = size
        if width * height > self.max_pixels:
            raise _TooManyPixels(
                f"Image too large ({width}x{height} = {width * height:,} pixels > "
                f"IMAGES_MAX_PIXELS {self.max_pixels:,})"
            )

    def convert_image(
        self,
        image: Any,
        size: tuple[int, int] | None = None,
        *,
        response_body: BytesIO | None = None,
    ) -> tuple[Any, BytesIO]:
        """``image`` in RGB (transparent parts on white) and as JPEG bytes, scaled to fit
        ``size`` if given; a JPEG already in RGB keeps ``response_body`` unchanged."""
        pil = self._Image
        as_downloaded = image.format == "JPEG" and image.mode == "RGB"
        if image.mode == "P":
            image = image.convert("RGBA")
        if image.mode in {"RGBA", "LA"}:
            rgba = image.convert("RGBA")
            background = pil.new("RGBA", rgba.size, (255, 255, 255))
            background.paste(rgba, rgba)
            image = background.convert("RGB")
        elif image.mode != "RGB":
            image = image.convert("RGB")
        if size:
            image = image.copy()
            image.thumbnail(size, _lanczos(pil))
        elif response_body is not None and as_downloaded:
            return image, response_body
        buf = BytesIO()
        image.save(buf, "JPEG")
        return image, buf
