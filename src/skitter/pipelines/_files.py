"""``FilesPipeline``: the files an item's ``file_urls`` name, stored, in ``files``.

Scrapy's import path and layout: ``FILES_STORE/full/<sha1 of the URL><extension>``, the
extension taken from the URL (or the type it implies); each result is ``{"url", "path",
"checksum" (MD5 of the bytes), "status" ("downloaded", "uptodate" or "cached")}``. How
the downloads run as tasks of the crawl is in ``_media``.
"""

from __future__ import annotations

import hashlib
import mimetypes
from pathlib import PurePosixPath
from typing import Any, ClassVar

from skitter.http import Request, Response
from skitter.pipelines._media import MediaInfo, MediaPipeline
from skitter.pipelines._media_store import md5sum

__all__ = ["FilesPipeline", "url_sha1"]


def url_sha1(url: str) -> str:
    return hashlib.sha1(url.encode("utf-8"), usedforsecurity=False).hexdigest()


class FilesPipeline(MediaPipeline):
    """Downloads ``file_urls`` (FILES_URLS_FIELD) into FILES_STORE; results go to
    ``files`` (FILES_RESULT_FIELD). Override ``file_path`` to choose where a file goes."""

    PREFIX: ClassVar[str] = "FILES"
    MEDIA_NAME: ClassVar[str] = "file"

    def file_path(
        self,
        request: Request,
        response: Response | None = None,
        info: MediaInfo | None = None,
        *,
        item: Any = None,
    ) -> str:
        extension = PurePosixPath(request.url).suffix
        if extension not in mimetypes.types_map:
            extension = ""
            guessed = mimetypes.guess_type(request.url)[0]
            if guessed:
                extension = mimetypes.guess_extension(guessed) or ""
        return f"full/{url_sha1(request.url)}{extension}"

    async def media_downloaded(
        self, response: Response, request: Request, info: MediaInfo, *, item: Any = None
    ) -> dict[str, Any]:
        path = self.file_path(request, response=response, info=info, item=item)
        checksum = await self.file_downloaded(response, request, info, item=item)
        status = "cached" if "cached" in response.flags else "downloaded"
        return {"url": request.url, "path": path, "checksum": checksum, "status": status}

    async def file_downloaded(
        self, response: Response, request: Request, info: MediaInfo, *, item: Any = None
    ) -> str:
        """Store the body; its checksum."""
        path = self.file_path(request, response=response, info=info, item=item)
        await self.store.persist_file(path, response.body, response.header("Content-Type"))
        return md5sum(response.body)
