"""Where the files and images pipelines keep what they download: a directory or S3.

A store answers two questions, both by a store-relative path (``full/<sha1>.jpg``):
``stat_file`` -- when was it stored and with what checksum (an empty dict when it is not
there), which decides whether a file is still up to date (FILES_EXPIRES) -- and
``persist_file``. Local files are written under a temporary name and renamed, so a crawl
killed mid-write never leaves a truncated file that a later run would call up to date.
Disk I/O runs in a thread: a large image must not stall the event loop.

A store that cannot be read or written (disk full, a bucket that refuses) raises
``StorageError``, as a feed does: the crawl fails and the media task is not
acknowledged, so a resumed job fetches that file again instead of finishing its item
without it.
"""

from __future__ import annotations

import asyncio
import hashlib
from contextlib import AsyncExitStack
from pathlib import Path
from typing import Any, Protocol

from skitter._secrets import mask_text, mask_url
from skitter.exceptions import ConfigError, StorageError
from skitter.pipelines._s3 import S3Location, open_s3_client, require_aiobotocore
from skitter.utils.wiring import write_whole

__all__ = ["FSFilesStore", "FilesStore", "S3FilesStore", "md5sum", "store_for"]


def md5sum(data: bytes) -> str:
    """The checksum a result carries: MD5 of the stored bytes, in hex (Scrapy's)."""
    return hashlib.md5(data, usedforsecurity=False).hexdigest()


class FilesStore(Protocol):
    """A place for media files. ``stat_file`` returns ``{"last_modified": <epoch
    seconds>, "checksum": <hex>}`` for a stored file, ``{}`` for a missing one."""

    async def open(self) -> None: ...

    async def close(self) -> None: ...

    async def stat_file(self, path: str) -> dict[str, Any]: ...

    async def persist_file(self, path: str, data: bytes, content_type: str | None) -> None: ...


class FSFilesStore:
    """Files under a local directory (created when missing)."""

    def __init__(self, basedir: str) -> None:
        if basedir.startswith("file://"):
            basedir = basedir[len("file://") :]
        self.basedir = Path(basedir)

    async def open(self) -> None:
        try:
            await asyncio.to_thread(self.basedir.mkdir, parents=True, exist_ok=True)
        except OSError as exc:
            raise StorageError(f"media store {self.basedir}: {exc}") from exc

    async def close(self) -> None:
        return None

    async def stat_file(self, path: str) -> dict[str, Any]:
        try:
            return await asyncio.to_thread(self._stat, self.basedir / path)
        except OSError as exc:
            raise StorageError(f"media store {self.basedir}: {exc}") from exc

    @staticmethod
    def _stat(target: Path) -> dict[str, Any]:
        try:
            modified = target.stat().st_mtime
            data = target.read_bytes()
        except FileNotFoundError:
            return {}
        return {"last_modified": modified, "checksum": md5sum(data)}

    async def persist_file(self, path: str, data: bytes, content_type: str | None) -> None:
        try:
            await asyncio.to_thread(self._write, self.basedir / path, data)
        except OSError as exc:
            raise StorageError(f"media store {self.basedir}: {exc}") from exc

    @staticmethod
    def _write(target: Path, data: bytes) -> None:
        target.parent.mkdir(parents=True, exist_ok=True)
        write_whole(target, data)


class S3FilesStore:
    """Files as objects under ``s3://bucket/prefix`` (skitter[s3]); the checksum of a
    stored object is its ETag, which for a single-part upload is the MD5 of its bytes.
    ``s3://KEY:SECRET@bucket/prefix`` gives the keys, as a feed URI does."""

    def __init__(self, uri: str, settings: Any) -> None:
        self.location = S3Location(uri)
        require_aiobotocore(f"the media store {self.location}")
        self._settings = settings
        self._stack = AsyncExitStack()
        self._client: Any = None

    async def open(self) -> None:
        client = open_s3_client(self._settings, self.location)
        self._client = await self._stack.enter_async_context(client)

    async def close(self) -> None:
        self._client = None
        await self._stack.aclose()

    async def stat_file(self, path: str) -> dict[str, Any]:
        from botocore.exceptions import ClientError

        try:
            head = await self._client.head_object(
                Bucket=self.location.bucket, Key=self.location.key(path)
            )
        except ClientError as exc:
            if exc.response.get("Error", {}).get("Code") in {"404", "NoSuchKey", "NotFound"}:
                return {}
            raise self._failed(exc) from exc
        except Exception as exc:
            raise self._failed(exc) from exc
        return {
            "last_modified": head["LastModified"].timestamp(),
            "checksum": head["ETag"].strip('"'),
        }

    async def persist_file(self, path: str, data: bytes, content_type: str | None) -> None:
        extra = {"ContentType": content_type} if content_type else {}
        try:
            await self._client.put_object(
                Bucket=self.location.bucket, Key=self.location.key(path), Body=data, **extra
            )
        except Exception as exc:
            raise self._failed(exc) from exc

    def _failed(self, exc: Exception) -> StorageError:
        reason = mask_text(f"{type(exc).__name__}: {exc}")
        return StorageError(f"media store {self.location}: {reason}")


def store_for(uri: str, settings: Any) -> FilesStore:
    """The store FILES_STORE / IMAGES_STORE names: ``s3://...`` or a local directory."""
    scheme = uri.split("://", 1)[0].lower() if "://" in uri else ""
    if scheme == "s3":
        return S3FilesStore(uri, settings)
    if scheme in {"", "file"}:
        return FSFilesStore(uri)
    raise ConfigError(
        f"media store {mask_url(uri)!r}: only a directory or s3://bucket/prefix is supported"
    )
