"""Where the files and images pipelines keep what they download: a directory or S3.

Scrapy's store API: ``stat_file(path, info)`` says when a stored file was written and
its checksum (an empty dict when it is not there), which decides whether it is still up
to date (FILES_EXPIRES); ``persist_file(path, buf, info, meta=None, headers=None)``
stores the bytes of ``buf``. Either may return an awaitable, which the pipeline awaits.

``FSFilesStore``'s methods block, as in Scrapy; the pipeline runs them in a thread
(``blocking``), so a large image does not stall the event loop. Local files are written
under a temporary name and renamed, so a crawl killed mid-write never leaves a truncated
file that a later run would call up to date.

A store that cannot be read or written (disk full, a bucket that refuses) raises
``StorageError``, as a feed does: the crawl fails and the media task is not
acknowledged, so a resumed job fetches that file again instead of finishing its item
without it.
"""

from __future__ import annotations

import asyncio
import hashlib
from collections.abc import Callable, Mapping
from contextlib import AsyncExitStack
from os import PathLike
from pathlib import Path
from typing import Any, ClassVar, TypeVar

from skitter._components import load_object
from skitter._secrets import mask_text
from skitter.exceptions import ConfigError, StorageError
from skitter.pipelines._s3 import S3Config, S3Location, require_aiobotocore, s3_client
from skitter.utils.defer import ensure_awaitable
from skitter.utils.wiring import write_whole

__all__ = [
    "FSFilesStore",
    "S3FilesStore",
    "blocking",
    "buffer_bytes",
    "call_store",
    "md5sum",
    "store_class",
]

#: The methods of Scrapy's store API a pipeline calls: a class without them is refused.
STORE_METHODS = ("persist_file", "stat_file")

F = TypeVar("F", bound=Callable[..., Any])


def blocking(method: F) -> F:
    """Mark a store method that blocks: the pipeline calls it in a thread."""
    method._skitter_blocking = True  # type: ignore[attr-defined]
    return method


async def call_store(store: Any, name: str, *args: Any, **kwargs: Any) -> Any:
    """``store``'s method ``name`` called as the pipeline calls it: in a thread when it
    is marked ``blocking``, awaited when it returns an awaitable (a Deferred included),
    so a store of either kind, built-in or a project's, is driven the same way."""
    method = getattr(store, name)
    if getattr(method, "_skitter_blocking", False) is True:
        return await asyncio.to_thread(method, *args, **kwargs)
    return await ensure_awaitable(method(*args, **kwargs))


def store_class(schemes: Mapping[str, Any], scheme: str, where: str) -> type:
    """The store class ``schemes`` (a pipeline's STORE_SCHEMES) holds for ``scheme``;
    ConfigError, naming ``where`` (the store setting and its URI), when the scheme is
    unknown, switched off (None) or mapped to something that is not a store class (a
    dotted path is imported), so a crawl that could not store its media does not start."""
    known = ", ".join(f"{name}://" for name, cls in schemes.items() if name and cls)
    if schemes.get(scheme) is None:
        why = "switched off in STORE_SCHEMES" if scheme in schemes else "no store"
        raise ConfigError(f"{where}: {why} for {scheme}:// (a directory, {known})")
    entry = schemes[scheme]
    try:
        cls = load_object(entry)
    except ConfigError as exc:
        raise ConfigError(f"{where}: STORE_SCHEMES[{scheme!r}]: {exc}") from None
    missing = [name for name in STORE_METHODS if not callable(getattr(cls, name, None))]
    if not isinstance(cls, type) or missing:
        raise ConfigError(
            f"{where}: STORE_SCHEMES[{scheme!r}] = {entry!r} is not a media store (a class "
            f"with {' and '.join(STORE_METHODS)}, built from the URI)"
        )
    return cls


def buffer_bytes(buf: Any) -> bytes:
    """The bytes of ``buf``: a file-like object (Scrapy's ``BytesIO``) or bytes."""
    if isinstance(buf, bytes | bytearray | memoryview):
        return bytes(buf)
    getvalue = getattr(buf, "getvalue", None)
    data = getvalue() if callable(getvalue) else buf.read()
    return bytes(data)


def md5sum(data: Any) -> str:
    """The checksum a result carries: MD5 of the stored bytes, in hex (Scrapy's); of
    bytes, or of a file-like object read from where it stands."""
    if isinstance(data, bytes | bytearray | memoryview):
        return hashlib.md5(data, usedforsecurity=False).hexdigest()
    digest = hashlib.md5(usedforsecurity=False)
    while chunk := data.read(8096):
        digest.update(chunk)
    return digest.hexdigest()


class FSFilesStore:
    """Files under a local directory (``basedir``, a path or a ``file://`` URI)."""

    def __init__(self, basedir: str | PathLike[str]) -> None:
        basedir = str(basedir)
        if basedir.startswith("file://"):
            basedir = basedir[len("file://") :]
        self.basedir = basedir

    def open(self) -> None:
        """Make the directory now, so that an unwritable one fails the crawl's start."""
        try:
            Path(self.basedir).mkdir(parents=True, exist_ok=True)
        except OSError as exc:
            raise StorageError(f"media store {self.basedir}: {exc}") from exc

    @blocking
    def persist_file(
        self, path: str, buf: Any, info: Any = None, meta: Any = None, headers: Any = None
    ) -> None:
        target = self._get_filesystem_path(path)
        try:
            target.parent.mkdir(parents=True, exist_ok=True)
            write_whole(target, buffer_bytes(buf))
        except OSError as exc:
            raise StorageError(f"media store {self.basedir}: {exc}") from exc

    @blocking
    def stat_file(self, path: str, info: Any = None) -> dict[str, Any]:
        target = self._get_filesystem_path(path)
        try:
            modified = target.stat().st_mtime
            data = target.read_bytes()
        except FileNotFoundError:
            return {}
        except OSError as exc:
            raise StorageError(f"media store {self.basedir}: {exc}") from exc
        return {"last_modified": modified, "checksum": md5sum(data)}

    def _get_filesystem_path(self, path: str | PathLike[str]) -> Path:
        return Path(self.basedir, path)


#: HTTP headers a media file may be stored with on S3, as put_object's arguments.
_S3_HEADERS = {
    name.lower(): argument
    for name, argument in {
        "Cache-Control": "CacheControl",
        "Content-Disposition": "ContentDisposition",
        "Content-Encoding": "ContentEncoding",
        "Content-Language": "ContentLanguage",
        "Content-Length": "ContentLength",
        "Content-MD5": "ContentMD5",
        "Content-Type": "ContentType",
        "Expires": "Expires",
        "X-Amz-Grant-Full-Control": "GrantFullControl",
        "X-Amz-Grant-Read": "GrantRead",
        "X-Amz-Grant-Read-ACP": "GrantReadACP",
        "X-Amz-Grant-Write-ACP": "GrantWriteACP",
        "X-Amz-Object-Lock-Legal-Hold": "ObjectLockLegalHoldStatus",
        "X-Amz-Object-Lock-Mode": "ObjectLockMode",
        "X-Amz-Object-Lock-Retain-Until-Date": "ObjectLockRetainUntilDate",
        "X-Amz-Request-Payer": "RequestPayer",
        "X-Amz-Server-Side-Encryption": "ServerSideEncryption",
        "X-Amz-Server-Side-Encryption-Aws-Kms-Key-Id": "SSEKMSKeyId",
        "X-Amz-Server-Side-Encryption-Context": "SSEKMSEncryptionContext",
        "X-Amz-Server-Side-Encryption-Customer-Algorithm": "SSECustomerAlgorithm",
        "X-Amz-Server-Side-Encryption-Customer-Key": "SSECustomerKey",
        "X-Amz-Server-Side-Encryption-Customer-Key-Md5": "SSECustomerKeyMD5",
        "X-Amz-Storage-Class": "StorageClass",
        "X-Amz-Tagging": "Tagging",
        "X-Amz-Website-Redirect-Location": "WebsiteRedirectLocation",
    }.items()
}


class S3FilesStore:
    """Files as objects under ``s3://bucket/prefix`` (skitter[s3], aiobotocore); the
    checksum of a stored object is its ETag, which for a single-part upload is the MD5
    of its bytes. ``s3://KEY:SECRET@bucket/prefix`` gives the keys, as a feed URI does;
    otherwise the crawl's AWS_* settings (or botocore's chain) do.

    ``POLICY`` is the canned ACL of new objects (FILES_STORE_S3_ACL / IMAGES_STORE_S3_ACL;
    None: the bucket's default) and ``HEADERS`` the headers every object is stored with,
    class attributes as in Scrapy."""

    POLICY: ClassVar[str | None] = None
    HEADERS: ClassVar[dict[str, str]] = {"Cache-Control": "max-age=172800"}

    def __init__(self, uri: str, settings: Any = None) -> None:
        if not uri.startswith("s3://"):
            raise ValueError(f"Incorrect URI scheme in {uri}, expected 's3'")
        self.location = S3Location(uri)
        require_aiobotocore(f"the media store {self.location}")
        self._config = S3Config.from_settings(settings if settings is not None else {})
        self._stack = AsyncExitStack()
        self._client: Any = None
        self._opening = asyncio.Lock()

    async def _connected(self) -> Any:
        """The client, made on first use (a store is built outside the event loop)."""
        async with self._opening:
            if self._client is None:
                client = s3_client(
                    self._config,
                    access_key=self.location.access_key,
                    secret_key=self.location.secret_key,
                )
                self._client = await self._stack.enter_async_context(client)
        return self._client

    async def close(self) -> None:
        self._client = None
        await self._stack.aclose()

    async def stat_file(self, path: str, info: Any = None) -> dict[str, Any]:
        from botocore.exceptions import ClientError

        try:
            client = await self._connected()
            head = await client.head_object(
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

    async def persist_file(
        self, path: str, buf: Any, info: Any = None, meta: Any = None, headers: Any = None
    ) -> None:
        extra = self._headers_to_botocore_kwargs({**self.HEADERS, **(headers or {})})
        if self.POLICY:
            extra["ACL"] = self.POLICY
        metadata = {str(key): str(value) for key, value in (meta or {}).items()}
        try:
            client = await self._connected()
            await client.put_object(
                Bucket=self.location.bucket,
                Key=self.location.key(path),
                Body=buffer_bytes(buf),
                Metadata=metadata,
                **extra,
            )
        except Exception as exc:
            raise self._failed(exc) from exc

    @staticmethod
    def _headers_to_botocore_kwargs(headers: dict[str, Any]) -> dict[str, Any]:
        """HTTP headers as put_object's arguments; TypeError for one it has none for."""
        kwargs: dict[str, Any] = {}
        for name, value in headers.items():
            argument = _S3_HEADERS.get(name.lower())
            if argument is None:
                raise TypeError(f'Header "{name}" is not supported by botocore')
            kwargs[argument] = value
        return kwargs

    def _failed(self, exc: Exception) -> StorageError:
        reason = mask_text(f"{type(exc).__name__}: {exc}")
        return StorageError(f"media store {self.location}: {reason}")
