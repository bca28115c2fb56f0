"""``FilesPipeline``: the files an item's ``file_urls`` name, stored, in ``files``.

Scrapy's import path, API and layout: ``FILES_STORE/full/<sha1 of the URL><extension>``,
the extension taken from the URL (or the type it implies); each result is ``{"url",
"path", "checksum" (MD5 of the bytes), "status" ("downloaded", "uptodate" or
"cached")}``. How the downloads run as tasks of the crawl is in ``_media_chain``.

Settings are resolved as in Scrapy: ``<CLASSNAME>_FILES_EXPIRES`` (and ``_URLS_FIELD``,
``_RESULT_FIELD``) for a subclass, then ``FILES_EXPIRES`` when the project set it, then
the class attribute (``EXPIRES``, ``FILES_URLS_FIELD``, ``DEFAULT_FILES_URLS_FIELD``).
"""

from __future__ import annotations

import contextlib
import hashlib
import inspect
import logging
import mimetypes
import time
from io import BytesIO
from pathlib import Path, PurePosixPath
from typing import Any, ClassVar
from urllib.parse import urlsplit

from skitter.exceptions import ConfigError, FatalError, IgnoreRequest
from skitter.http import Request, Response
from skitter.items import adapter_class
from skitter.pipelines._media import FileException, MediaPipeline
from skitter.pipelines._media_chain import _MediaRequestFiltered
from skitter.pipelines._media_ftp import FTPFilesStore, GCSFilesStore
from skitter.pipelines._media_store import (
    FSFilesStore,
    S3FilesStore,
    call_store,
    md5sum,
    store_class,
)
from skitter.utils.defer import ensure_awaitable

__all__ = ["FilesPipeline", "setting_or", "url_sha1"]

log = logging.getLogger("skitter.pipelines.files")


def url_sha1(url: str) -> str:
    return hashlib.sha1(url.encode("utf-8"), usedforsecurity=False).hexdigest()


def setting_or(settings: Any, name: str, fallback: Any) -> Any:
    """``name``'s value when something set it (not skitter's default), else
    ``fallback``: a subclass's class attribute wins over a default, as in Scrapy."""
    if name in settings and (settings.getpriority(name) or 0) > 0:
        return settings.get(name)
    return fallback


class FilesPipeline(MediaPipeline):
    """Downloads ``file_urls`` (FILES_URLS_FIELD) into FILES_STORE; results go to
    ``files`` (FILES_RESULT_FIELD). Override ``file_path`` to choose where a file goes."""

    #: Settings prefix (FILES, IMAGES), and the name results and stats are counted under.
    PREFIX: ClassVar[str] = "FILES"
    MEDIA_NAME: ClassVar[str] = "file"
    EXPIRES: ClassVar[int] = 90
    DEFAULT_FILES_URLS_FIELD: ClassVar[str] = "file_urls"
    DEFAULT_FILES_RESULT_FIELD: ClassVar[str] = "files"
    #: Scheme -> store class, Scrapy's table: a subclass extends it (``{**FilesPipeline.
    #: STORE_SCHEMES, "sftp": SftpStore}``) or switches a scheme off with None.
    STORE_SCHEMES: ClassVar[dict[str, type | None]] = {
        "": FSFilesStore,
        "file": FSFilesStore,
        "s3": S3FilesStore,
        "ftp": FTPFilesStore,
        "gs": GCSFilesStore,
    }

    def __init__(
        self,
        store_uri: str | Path,
        download_func: Any = None,
        settings: Any = None,
        *,
        crawler: Any = None,
    ) -> None:
        if crawler is None:
            raise TypeError(f"{type(self).__name__} needs a crawler: build it with from_crawler")
        if not store_uri:
            raise ConfigError(
                f"{type(self).__name__} is in ITEM_PIPELINES but {self.PREFIX}_STORE is not "
                "set (a directory, s3://bucket/prefix or ftp://host/dir)"
            )
        own = crawler.settings
        self.store: Any = self._get_store(str(store_uri), own)
        self._read_settings(own)
        super().__init__(download_func=download_func, crawler=crawler)

    def _read_settings(self, settings: Any) -> None:
        def value(key: str, fallback: Any) -> Any:
            own_key = self._key_for_pipe(key, "FilesPipeline", settings)
            return setting_or(settings, own_key, fallback)

        cls = type(self)
        self.expires: int = int(value("FILES_EXPIRES", self.EXPIRES))
        urls = getattr(cls, "FILES_URLS_FIELD", self.DEFAULT_FILES_URLS_FIELD)
        result = getattr(cls, "FILES_RESULT_FIELD", self.DEFAULT_FILES_RESULT_FIELD)
        self.FILES_URLS_FIELD, self.FILES_RESULT_FIELD = urls, result
        self.files_urls_field: str = value("FILES_URLS_FIELD", urls)
        self.files_result_field: str = value("FILES_RESULT_FIELD", result)

    @classmethod
    def from_crawler(cls, crawler: Any) -> Any:
        settings = crawler.settings
        cls._update_stores(settings)
        return cls(settings.get(f"{cls.PREFIX}_STORE"), crawler=crawler)

    @classmethod
    def _update_stores(cls, settings: Any) -> None:
        """The stores' class-wide settings, as Scrapy sets them: the S3 objects' ACL
        and the FTP mode."""
        s3: Any = cls.STORE_SCHEMES.get("s3")
        if s3 is not None:
            s3.POLICY = settings.get(f"{cls.PREFIX}_STORE_S3_ACL") or None
        ftp: Any = cls.STORE_SCHEMES.get("ftp")
        if ftp is not None:
            ftp.USE_ACTIVE_MODE = settings.getbool("FEED_STORAGE_FTP_ACTIVE")

    def _get_store(self, uri: str, settings: Any) -> Any:
        scheme = "file" if Path(uri).is_absolute() else urlsplit(uri).scheme
        where = f"{self.PREFIX}_STORE {uri!r}"
        cls = store_class(self.STORE_SCHEMES, scheme, where)
        if "settings" in inspect.signature(cls).parameters:
            return cls(uri, settings=settings)
        return cls(uri)

    def _open_store(self) -> None:
        opener = getattr(self.store, "open", None)
        if callable(opener):
            opener()

    async def close_spider(self, spider: Any = None) -> None:
        closer = getattr(self.store, "close", None)
        if callable(closer):
            await ensure_awaitable(closer())

    async def _store_call(self, name: str, *args: Any, **kwargs: Any) -> Any:
        """The store's ``name`` method, called as every store is (``call_store``)."""
        return await call_store(self.store, name, *args, **kwargs)

    def inc_stats(self, status: str) -> None:
        stats = self.crawler.stats
        stats.inc_value(f"{self.MEDIA_NAME}_count")
        stats.inc_value(f"{self.MEDIA_NAME}_status_count/{status}")

    # -- Scrapy's hooks --------------------------------------------------------------
    def get_media_requests(self, item: Any, info: Any) -> list[Request]:
        urls = adapter_class()(item).get(self.files_urls_field, [])
        if not isinstance(urls, list):
            raise TypeError(
                f"{self.files_urls_field} must be a list of URLs, got {type(urls).__name__}"
            )
        return [Request(url) for url in urls]

    async def media_to_download(
        self, request: Request, info: Any, *, item: Any = None
    ) -> dict[str, Any] | None:
        """The stored file's result when it is younger than ``expires`` days."""
        path = self.file_path(request, info=info, item=item)
        stat = await self._store_call("stat_file", path, info)
        modified = stat.get("last_modified")
        if not modified or (time.time() - modified) / 86400 > self.expires:
            return None
        self.inc_stats("uptodate")
        return {"url": request.url, "path": path, "checksum": stat.get("checksum"),
                "status": "uptodate"}  # fmt: skip

    def media_failed(self, failure: Any, request: Request, info: Any) -> Any:
        referer = _referer(request)
        if failure.check(IgnoreRequest):
            log.debug(
                "%s (filtered): not downloading %s referred in <%s>: %s",
                self.MEDIA_NAME.capitalize(), request, referer, failure.value,
            )  # fmt: skip
            raise _MediaRequestFiltered(str(failure.value))
        log.warning(
            "%s (unknown-error): Error downloading %s from %s referred in <%s>: %s",
            self.MEDIA_NAME.capitalize(), self.MEDIA_NAME, request, referer, failure.value,
        )  # fmt: skip
        raise FileException(f"{type(failure.value).__name__}: {failure.value}")

    async def media_downloaded(
        self, response: Response, request: Request, info: Any, *, item: Any = None
    ) -> dict[str, Any]:
        """Store the file; its result (url, path, checksum, status). Raise to fail it."""
        name, referer = self.MEDIA_NAME.capitalize(), _referer(request)
        if response.status != 200:
            log.warning(
                "%s (code: %s): Error downloading %s from %s referred in <%s>",
                name, response.status, self.MEDIA_NAME, request, referer,
            )  # fmt: skip
            raise FileException(f"code: {response.status}")
        if not response.body:
            log.warning(
                "%s (empty-content): Empty %s from %s referred in <%s>: no content",
                name, self.MEDIA_NAME, request, referer,
            )  # fmt: skip
            raise FileException("empty-content")
        status = "cached" if "cached" in response.flags else "downloaded"
        try:
            path = self.file_path(request, response=response, info=info, item=item)
            checksum = await ensure_awaitable(
                self.file_downloaded(response, request, info, item=item)
            )
        except (FileException, FatalError) as exc:
            log.warning(
                "%s (error): Error processing %s from %s referred in <%s>: %s",
                name, self.MEDIA_NAME, request, referer, exc,
            )  # fmt: skip
            raise
        except Exception as exc:
            log.error(
                "%s (unknown-error): Error processing %s from %s referred in <%s>",
                name, self.MEDIA_NAME, request, referer, exc_info=True,
            )  # fmt: skip
            raise FileException(f"error: {exc}") from exc
        self.inc_stats(status)
        return {"url": request.url, "path": path, "checksum": checksum, "status": status}

    def item_completed(self, results: list[tuple[bool, Any]], item: Any, info: Any) -> Any:
        """The item with the successful results in its result field (failures were
        logged when they happened)."""
        with contextlib.suppress(KeyError):  # an item without that field
            adapter_class()(item)[self.files_result_field] = [v for ok, v in results if ok]
        return item

    def file_path(
        self,
        request: Request,
        response: Response | None = None,
        info: Any = None,
        *,
        item: Any = None,
    ) -> str:
        extension = PurePosixPath(urlsplit(request.url).path).suffix
        if extension not in mimetypes.types_map:
            extension = ""
            guessed = mimetypes.guess_type(request.url)[0]
            if guessed:
                extension = mimetypes.guess_extension(guessed) or ""
        return f"full/{url_sha1(request.url)}{extension}"

    async def file_downloaded(
        self, response: Response, request: Request, info: Any, *, item: Any = None
    ) -> str:
        """Store the body; its checksum."""
        path = self.file_path(request, response=response, info=info, item=item)
        content_type = response.headers.get("Content-Type")
        headers = {"Content-Type": _text(content_type)} if content_type else None
        await self._store_call("persist_file", path, BytesIO(response.body), info, headers=headers)
        return md5sum(response.body)


def _referer(request: Request) -> str | None:
    value = request.headers.get("Referer")
    return _text(value) if value is not None else None


def _text(value: Any) -> str:
    return value.decode("latin-1") if isinstance(value, bytes) else str(value)
