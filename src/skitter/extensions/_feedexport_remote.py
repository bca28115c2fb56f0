"""Scrapy's remote feed storages by their Scrapy names: ``FTPFeedStorage``,
``S3FeedStorage``, ``GCSFeedStorage``, for code that builds or subclasses them.

skitter's own feeds upload through ``skitter.pipelines`` (resumable, with their own
retries); these classes keep Scrapy's constructor, attributes and blocking
``_store_in_thread`` so that a project's storage written on them runs as it is. The
store is blocking: skitter's FEED_STORAGES adapter calls it on a worker thread.
Credentials are attributes, never logged.
"""

from __future__ import annotations

import ftplib
import logging
import posixpath
from typing import IO, Any
from urllib.parse import unquote, urlsplit

from skitter.exceptions import NotConfigured
from skitter.extensions._feedexport import BlockingFeedStorage
from skitter.settings import AwsSettings, FeedSettings

__all__ = ["FTPFeedStorage", "GCSFeedStorage", "S3FeedStorage"]

_log = logging.getLogger("skitter.extensions.feedexport")

#: Scrapy's thread pool size (REACTOR_THREADPOOL_MAXSIZE's default), its S3 pool's size.
_THREADS = 10


def _overwrite(feed_options: dict[str, Any] | None, default: bool) -> bool:
    return bool((feed_options or {}).get("overwrite", default))


class FTPFeedStorage(BlockingFeedStorage):
    """An FTP upload (passive mode unless FEED_STORAGE_FTP_ACTIVE); it replaces the
    remote file unless ``overwrite`` is false, then it appends."""

    def __init__(
        self,
        uri: str,
        use_active_mode: bool = False,
        *,
        feed_options: dict[str, Any] | None = None,
    ) -> None:
        parts = urlsplit(uri)
        if not parts.hostname:
            raise ValueError(f"Got a storage URI without a hostname: {uri}")
        self.host: str = parts.hostname
        self.port: int = int(parts.port or "21")
        self.username: str = unquote(parts.username or "")
        self.password: str = unquote(parts.password or "")
        self.path: str = parts.path
        self.use_active_mode = use_active_mode
        self.overwrite = _overwrite(feed_options, True)

    @classmethod
    def from_crawler(
        cls, crawler: Any, uri: str, *, feed_options: dict[str, Any] | None = None
    ) -> FTPFeedStorage:
        active = crawler.settings.view(FeedSettings).feed_storage_ftp_active
        return cls(uri, active, feed_options=feed_options)

    def _store_in_thread(self, file: IO[bytes]) -> None:
        file.seek(0)
        with ftplib.FTP() as ftp:
            ftp.connect(self.host, self.port)
            ftp.login(self.username, self.password)
            if self.use_active_mode:
                ftp.set_pasv(False)
            dirname, filename = posixpath.split(self.path)
            _makedirs(ftp, dirname)
            command = "STOR" if self.overwrite else "APPE"
            ftp.storbinary(f"{command} {filename}", file)
        file.close()


def _makedirs(ftp: ftplib.FTP, path: str) -> None:
    """Enter ``path`` on the server, making each missing directory."""
    for part in (p for p in path.split("/") if p):
        try:
            ftp.cwd(part)
        except ftplib.error_perm:
            ftp.mkd(part)
            ftp.cwd(part)


class S3FeedStorage(BlockingFeedStorage):
    """An S3 upload with boto3 (``upload_fileobj``); credentials in the URI win over
    the arguments. S3 cannot append: ``overwrite`` is always true."""

    def __init__(
        self,
        uri: str,
        access_key: str | None = None,
        secret_key: str | None = None,
        acl: str | None = None,
        endpoint_url: str | None = None,
        *,
        feed_options: dict[str, Any] | None = None,
        session_token: str | None = None,
        region_name: str | None = None,
        max_pool_connections: int | None = None,
    ) -> None:
        try:
            import boto3.session  # type: ignore[import-untyped]
            from botocore.config import Config
        except ImportError:
            raise NotConfigured("missing boto3 library") from None
        parts = urlsplit(uri)
        self.bucketname: str = parts.hostname or ""
        self.access_key = unquote(parts.username) if parts.username else access_key
        self.secret_key = unquote(parts.password) if parts.password else secret_key
        self.session_token = session_token
        self.keyname: str = parts.path[1:]
        self.acl = acl
        self.endpoint_url = endpoint_url
        self.region_name = region_name
        self.max_pool_connections = max_pool_connections
        config = Config(max_pool_connections=max_pool_connections or 10)
        session = boto3.session.Session()
        self.s3_client: Any = session.client(
            "s3",
            aws_access_key_id=self.access_key,
            aws_secret_access_key=self.secret_key,
            aws_session_token=self.session_token,
            endpoint_url=self.endpoint_url,
            region_name=self.region_name,
            config=config,
        )
        if _overwrite(feed_options, True) is False:
            _log.warning(
                "S3 does not support appending to files. To suppress this warning, remove "
                "the overwrite option from your FEEDS setting or set it to True."
            )

    @classmethod
    def from_crawler(
        cls, crawler: Any, uri: str, *, feed_options: dict[str, Any] | None = None
    ) -> S3FeedStorage:
        aws = crawler.settings.view(AwsSettings)
        # Scrapy's size unless the project set one: this blocking client uploads from one
        # worker thread at a time (skitter's default is for its own, concurrent client).
        pool = _THREADS
        if crawler.settings.source("AWS_MAX_POOL_CONNECTIONS") != "default":
            pool = aws.aws_max_pool_connections
        return cls(
            uri,
            access_key=aws.aws_access_key_id,
            secret_key=aws.aws_secret_access_key,
            session_token=aws.aws_session_token,
            acl=crawler.settings.view(FeedSettings).feed_storage_s3_acl or None,
            endpoint_url=aws.aws_endpoint_url or None,
            region_name=aws.aws_region_name or None,
            feed_options=feed_options,
            max_pool_connections=int(pool),
        )

    def _store_in_thread(self, file: IO[bytes]) -> None:
        file.seek(0)
        extra = {"ExtraArgs": {"ACL": self.acl}} if self.acl else {}
        self.s3_client.upload_fileobj(
            Bucket=self.bucketname, Key=self.keyname, Fileobj=file, **extra
        )
        file.close()


class GCSFeedStorage(BlockingFeedStorage):
    """A Google Cloud Storage upload (google-cloud-storage); GCS cannot append."""

    def __init__(
        self,
        uri: str,
        project_id: str | None,
        acl: str | None,
        *,
        feed_options: dict[str, Any] | None = None,
    ) -> None:
        parts = urlsplit(uri)
        self.project_id = project_id
        self.acl = acl
        self.bucket_name: str = parts.hostname or ""
        self.blob_name: str = parts.path[1:]
        if _overwrite(feed_options, True) is False:
            _log.warning(
                "GCS does not support appending to files. To suppress this warning, remove "
                "the overwrite option from your FEEDS setting or set it to True."
            )

    @classmethod
    def from_crawler(
        cls, crawler: Any, uri: str, *, feed_options: dict[str, Any] | None = None
    ) -> GCSFeedStorage:
        settings = crawler.settings
        acl = settings.get("FEED_STORAGE_GCS_ACL") or None
        return cls(uri, settings.view(FeedSettings).gcs_project_id, acl, feed_options=feed_options)

    def _store_in_thread(self, file: IO[bytes]) -> None:
        from google.cloud.storage import Client  # type: ignore[import-untyped]

        file.seek(0)
        client = Client(project=self.project_id)
        blob = client.get_bucket(self.bucket_name).blob(self.blob_name)
        try:
            blob.upload_from_file(file, predefined_acl=self.acl)
        finally:
            file.close()
