"""S3 for skitter: Scrapy's ``AWS_*`` settings turned into an aiobotocore client, for the
S3 feed storage and the S3 media store. Imported only when something uses S3
(``skitter[s3]``); a missing aiobotocore is refused at start with a one-line message.

``AWS_ENDPOINT_URL`` points at any S3-compatible store (MinIO, Ceph, R2, GCS's XML
API, moto); an endpoint given by IP address or ``localhost`` gets path-style addressing
(``http://host/bucket/key``), since a bucket cannot be a subdomain of an IP. Keys left
unset fall back to botocore's usual chain (environment, shared files, instance role).
``s3://KEY:SECRET@bucket/path`` in a feed URI (as in Scrapy) or a media store gives the
keys too, percent-encoded (``split_s3_uri``).
"""

from __future__ import annotations

import asyncio
import ipaddress
from collections.abc import AsyncIterator, Mapping
from contextlib import asynccontextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any
from urllib.parse import unquote, urlsplit

from skitter._secrets import authority_problem, mask_url
from skitter.exceptions import ConfigError

__all__ = [
    "S3Config",
    "S3FeedStorage",
    "S3Location",
    "open_s3_client",
    "require_aiobotocore",
    "s3_client",
    "split_s3_uri",
]

_EXTRA = "S3 needs the s3 extra: pip install 'skitter[s3]'"


@dataclass(frozen=True, slots=True)
class S3Config:
    """The ``AWS_*`` settings (repr hides the secrets)."""

    access_key: str | None = None
    secret_key: str | None = None
    session_token: str | None = None
    endpoint_url: str | None = None
    region: str | None = None
    use_ssl: bool | None = None
    verify: bool | str | None = None
    max_pool_connections: int | None = None
    acl: str | None = None

    @classmethod
    def from_settings(cls, settings: Mapping[str, Any], *, acl_setting: str = "") -> S3Config:
        get = settings.get
        return cls(
            access_key=get("AWS_ACCESS_KEY_ID") or None,
            secret_key=get("AWS_SECRET_ACCESS_KEY") or None,
            session_token=get("AWS_SESSION_TOKEN") or None,
            endpoint_url=get("AWS_ENDPOINT_URL") or None,
            region=get("AWS_REGION_NAME") or None,
            use_ssl=get("AWS_USE_SSL"),
            verify=_verify(get("AWS_VERIFY")),
            max_pool_connections=get("AWS_MAX_POOL_CONNECTIONS") or None,
            acl=(get(acl_setting) or None) if acl_setting else None,
        )

    def __repr__(self) -> str:
        endpoint = None if self.endpoint_url is None else mask_url(self.endpoint_url)
        return f"S3Config(endpoint_url={endpoint!r}, region={self.region!r})"


def _verify(value: Any) -> bool | str | None:
    """AWS_VERIFY: a boolean (also as text from the command line) or a CA bundle path."""
    if isinstance(value, str) and value.strip().lower() in ("true", "1", "yes", "false", "0", "no"):
        return value.strip().lower() in ("true", "1", "yes")
    if value is None or isinstance(value, bool | str):
        return value
    raise ConfigError(f"AWS_VERIFY must be True, False or a CA bundle path, not {value!r}")


def split_s3_uri(uri: str) -> tuple[str, str, str | None, str | None]:
    """``s3://[KEY:SECRET@]bucket/path`` as (bucket, key, access key, secret key), all
    percent-decoded (a secret's ``/`` is written ``%2F``, a key's ``@`` ``%40``). A URI
    whose userinfo ``urlsplit`` would misread is refused (``authority_problem``)."""
    problem = authority_problem(uri)
    if problem is not None:
        raise ConfigError(f"S3 URI {mask_url(uri)!r}: {problem}")
    parts = urlsplit(uri)
    if parts.scheme != "s3" or not parts.hostname:
        raise ConfigError(f"not an S3 URI: {mask_url(uri)!r} (expected s3://bucket/key)")
    user = unquote(parts.username) if parts.username else None
    password = unquote(parts.password) if parts.password else None
    return parts.hostname, unquote(parts.path.lstrip("/")), user, password


class S3Location:
    """``s3://[KEY:SECRET@]bucket/prefix`` (a media store) split by ``split_s3_uri``:
    its bucket, key prefix (no leading slash) and the keys it carries, if any."""

    __slots__ = ("access_key", "bucket", "prefix", "secret_key")

    def __init__(self, uri: str) -> None:
        self.bucket, prefix, self.access_key, self.secret_key = split_s3_uri(uri)
        self.prefix = prefix.strip("/")

    def key(self, path: str) -> str:
        """The object key of ``path`` (a store-relative path like ``full/<sha1>.jpg``)."""
        return f"{self.prefix}/{path}" if self.prefix else path

    def __str__(self) -> str:
        """Where it is, as messages name it: never its keys."""
        return f"s3://{self.bucket}/{self.prefix}"


def require_aiobotocore(what: str) -> None:
    """ConfigError naming the extra when aiobotocore is not installed."""
    try:
        import aiobotocore  # noqa: F401
    except ImportError:
        raise ConfigError(f"{what} needs aiobotocore: pip install 'skitter[s3]'") from None


def _path_style(endpoint: str | None) -> bool:
    if not endpoint:
        return False
    host = urlsplit(endpoint).hostname or ""
    if host == "localhost":
        return True
    try:
        ipaddress.ip_address(host)
    except ValueError:
        return False
    return True


@asynccontextmanager
async def s3_client(
    config: S3Config,
    *,
    access_key: str | None = None,
    secret_key: str | None = None,
    single_attempt: bool = False,
) -> AsyncIterator[Any]:
    """An aiobotocore S3 client for ``config`` (keys given here win over the settings').

    ``single_attempt``: for a caller that retries a whole store itself (feeds), so that
    its bound on attempts is the only one; otherwise botocore's own retries apply."""
    try:
        from aiobotocore.config import AioConfig
        from aiobotocore.session import get_session
    except ImportError:  # pragma: no cover - the extra was checked at start
        raise ConfigError(_EXTRA) from None
    options: dict[str, Any] = {}
    if single_attempt:
        options["retries"] = {"max_attempts": 1}
    if _path_style(config.endpoint_url):
        options["s3"] = {"addressing_style": "path"}
    if config.max_pool_connections:
        options["max_pool_connections"] = config.max_pool_connections
    kwargs: dict[str, Any] = {
        "region_name": config.region,
        "endpoint_url": config.endpoint_url,
        "aws_access_key_id": access_key or config.access_key,
        "aws_secret_access_key": secret_key or config.secret_key,
        "aws_session_token": config.session_token,
        "config": AioConfig(**options),
    }
    if config.use_ssl is not None:
        kwargs["use_ssl"] = config.use_ssl
    if config.verify is not None:
        kwargs["verify"] = config.verify
    async with get_session().create_client("s3", **kwargs) as client:
        yield client


def open_s3_client(settings: Mapping[str, Any], location: S3Location | None = None) -> Any:
    """An S3 client (an async context manager) from the crawl's ``AWS_*`` settings, with
    the keys of ``location``'s URI, when it has some, instead of theirs."""
    if location is None:
        return s3_client(S3Config.from_settings(settings))
    return s3_client(
        S3Config.from_settings(settings),
        access_key=location.access_key,
        secret_key=location.secret_key,
    )


class S3FeedStorage:
    """Stores a finished feed file as one S3 object (``FEED_STORAGE_S3_ACL`` applied)."""

    name = "S3FeedStorage"

    def __init__(self, settings: Mapping[str, Any]) -> None:
        self._config = S3Config.from_settings(settings, acl_setting="FEED_STORAGE_S3_ACL")

    async def store(self, source: Path, target: str) -> None:
        bucket, key, access_key, secret_key = split_s3_uri(target)
        extra: dict[str, Any] = {"ACL": self._config.acl} if self._config.acl else {}
        body = await asyncio.to_thread(source.read_bytes)
        async with s3_client(
            self._config, access_key=access_key, secret_key=secret_key, single_attempt=True
        ) as client:
            await client.put_object(Bucket=bucket, Key=key, Body=body, **extra)

    async def aclose(self) -> None:
        return None
