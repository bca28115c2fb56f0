"""``FTPFilesStore``: media files on an FTP server (``ftp://user:password@host/dir``).

Scrapy's class attributes hold what the URI does not say: ``FTP_USERNAME`` and
``FTP_PASSWORD`` (anonymous / guest) and ``USE_ACTIVE_MODE`` (FEED_STORAGE_FTP_ACTIVE,
passive by default). Both methods block (ftplib); the pipeline runs them in a thread.
A stored file's date is the server's ``MDTM``, its checksum the MD5 of its bytes.
"""

from __future__ import annotations

import contextlib
import ftplib
import hashlib
import posixpath
from calendar import timegm
from io import BytesIO
from time import strptime
from typing import Any, ClassVar
from urllib.parse import unquote, urlsplit

from skitter._secrets import mask_text
from skitter.exceptions import ConfigError, StorageError
from skitter.pipelines._ftp import TIMEOUT, _make_dirs
from skitter.pipelines._media_store import blocking, buffer_bytes

__all__ = ["FTPFilesStore", "GCSFilesStore"]


class FTPFilesStore:
    """Files under a directory of an FTP server."""

    FTP_USERNAME: ClassVar[str | None] = None
    FTP_PASSWORD: ClassVar[str | None] = None
    USE_ACTIVE_MODE: ClassVar[bool | None] = None

    def __init__(self, uri: str) -> None:
        if not uri.startswith("ftp://"):
            raise ValueError(f"Incorrect URI scheme in {uri}, expected 'ftp'")
        parts = urlsplit(uri)
        self.host = parts.hostname or ""
        self.port = parts.port or 21
        self.username = unquote(parts.username or "") or self.FTP_USERNAME or "anonymous"
        self.password = unquote(parts.password or "") or self.FTP_PASSWORD or "guest"
        self.basedir = unquote(parts.path).rstrip("/")

    def _connect(self) -> ftplib.FTP:
        ftp = ftplib.FTP(timeout=TIMEOUT)
        ftp.connect(self.host, self.port)
        ftp.login(self.username, self.password)
        ftp.set_pasv(not self.USE_ACTIVE_MODE)
        return ftp

    @blocking
    def persist_file(
        self, path: str, buf: Any, info: Any = None, meta: Any = None, headers: Any = None
    ) -> None:
        folder, name = posixpath.split(f"{self.basedir}/{path}")
        try:
            with self._connect() as ftp:
                _make_dirs(ftp, folder)
                ftp.storbinary(f"STOR {name}", BytesIO(buffer_bytes(buf)))
        except ftplib.all_errors as exc:
            raise self._failed(exc) from exc

    @blocking
    def stat_file(self, path: str, info: Any = None) -> dict[str, Any]:
        target = f"{self.basedir}/{path}"
        try:
            with self._connect() as ftp:
                try:
                    modified = ftp.voidcmd(f"MDTM {target}")[4:].strip()
                except ftplib.error_perm:
                    return {}  # no such file
                digest = hashlib.md5(usedforsecurity=False)
                ftp.retrbinary(f"RETR {target}", digest.update)
        except ftplib.all_errors as exc:
            raise self._failed(exc) from exc
        with contextlib.suppress(ValueError):
            when = timegm(strptime(modified[:14], "%Y%m%d%H%M%S"))
            return {"last_modified": float(when), "checksum": digest.hexdigest()}
        return {"checksum": digest.hexdigest()}  # a date the server did not say: refetched

    def _failed(self, exc: BaseException) -> StorageError:
        reason = mask_text(f"{type(exc).__name__}: {exc}")
        return StorageError(f"media store ftp://{self.host}:{self.port}{self.basedir}: {reason}")


class GCSFilesStore:
    """Scrapy's store for ``gs://`` media: not in skitter yet, so building one is refused
    (a crawl naming gs:// in FILES_STORE or IMAGES_STORE does not start). The class and
    its attributes exist for code that imports or configures it."""

    GCS_PROJECT_ID: ClassVar[str | None] = None
    CACHE_CONTROL: ClassVar[str] = "max-age=172800"
    POLICY: ClassVar[str | None] = None

    def __init__(self, uri: str) -> None:
        raise ConfigError(
            f"media store {mask_text(uri)!r}: gs:// media stores are not supported yet; "
            "FILES_STORE and IMAGES_STORE take a directory, s3:// or ftp://"
        )

    # Scrapy's store methods, so STORE_SCHEMES takes the class and building it refuses
    # with the message above; never reached.
    def persist_file(self, *args: Any, **kwargs: Any) -> None:
        raise NotImplementedError

    def stat_file(self, *args: Any, **kwargs: Any) -> None:
        raise NotImplementedError
