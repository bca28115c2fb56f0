"""The S3 client: one place that turns the AWS_* settings into an aiobotocore client.

aiobotocore is an optional dependency (``skitter[s3]``), imported only when an
``s3://`` store is opened; a missing one is refused at start with a one-line message.
An endpoint given by IP address (MinIO, moto's server on 127.0.0.1) has no bucket
subdomains, so it is addressed path-style. Credentials go to botocore only: no log line
or error message here carries them (``settings`` masks them when shown).
"""

from __future__ import annotations

import ipaddress
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from typing import Any
from urllib.parse import urlsplit

from skitter.exceptions import ConfigError

__all__ = ["S3Location", "open_s3_client", "require_aiobotocore"]


class S3Location:
    """``s3://bucket/prefix`` split into its bucket and key prefix (no leading slash)."""

    __slots__ = ("bucket", "prefix")

    def __init__(self, uri: str) -> None:
        parts = urlsplit(uri)
        if parts.scheme != "s3" or not parts.netloc:
            raise ConfigError(f"not an S3 location: {uri!r} (expected s3://bucket/prefix)")
        self.bucket = parts.netloc
        self.prefix = parts.path.strip("/")

    def key(self, path: str) -> str:
        """The object key of ``path`` (a store-relative path like ``full/<sha1>.jpg``)."""
        return f"{self.prefix}/{path}" if self.prefix else path


def require_aiobotocore(what: str) -> None:
    """ConfigError naming the extra when aiobotocore is not installed."""
    try:
        import aiobotocore  # noqa: F401
    except ImportError:
        raise ConfigError(f"{what} needs aiobotocore: pip install 'skitter[s3]'") from None


def _is_ip_endpoint(endpoint: str | None) -> bool:
    if not endpoint:
        return False
    host = urlsplit(endpoint).hostname or ""
    try:
        ipaddress.ip_address(host)
    except ValueError:
        return host == "localhost"
    return True


@asynccontextmanager
async def open_s3_client(settings: Any) -> AsyncIterator[Any]:
    """An aiobotocore S3 client built from the AWS_* settings, closed when the block ends."""
    from aiobotocore.config import AioConfig
    from aiobotocore.session import get_session

    endpoint = settings["AWS_ENDPOINT_URL"]
    config: dict[str, Any] = {"max_pool_connections": settings["AWS_MAX_POOL_CONNECTIONS"]}
    if _is_ip_endpoint(endpoint):
        config["s3"] = {"addressing_style": "path"}
    kwargs: dict[str, Any] = {
        "region_name": settings["AWS_REGION_NAME"],
        "endpoint_url": endpoint,
        "aws_access_key_id": settings["AWS_ACCESS_KEY_ID"],
        "aws_secret_access_key": settings["AWS_SECRET_ACCESS_KEY"],
        "aws_session_token": settings["AWS_SESSION_TOKEN"],
        "config": AioConfig(**config),
    }
    if settings["AWS_USE_SSL"] is not None:
        kwargs["use_ssl"] = settings["AWS_USE_SSL"]
    if settings["AWS_VERIFY"] is not None:
        kwargs["verify"] = settings["AWS_VERIFY"]
    async with get_session().create_client("s3", **kwargs) as client:
        yield client
