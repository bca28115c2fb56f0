"""The Google Cloud Storage feed storage (``gs://bucket/path``): gcloud-aio-storage,
imported only when a feed uses it (``skitter[gcs]``).

Credentials are Google's usual ones (``GOOGLE_APPLICATION_CREDENTIALS``, or the metadata
server on Google Cloud); ``STORAGE_EMULATOR_HOST`` (``http://host:port``) sends
everything to an emulator instead, without credentials. ``GCS_PROJECT_ID`` is accepted
as in Scrapy, where only the client holds it: an upload into an existing bucket does not
use it.
"""

from __future__ import annotations

import asyncio
from collections.abc import Mapping
from pathlib import Path
from typing import Any
from urllib.parse import unquote, urlsplit

from skitter.exceptions import ConfigError

__all__ = ["GcsFeedStorage", "split_gs_uri"]

#: Seconds an upload may take before it fails (and is retried).
TIMEOUT = 120


def split_gs_uri(uri: str) -> tuple[str, str]:
    """``gs://bucket/path`` as (bucket, object name)."""
    parts = urlsplit(uri)
    if parts.scheme != "gs" or not parts.hostname:
        raise ConfigError("a GCS URI is gs://bucket/path")
    return parts.hostname, unquote(parts.path.lstrip("/"))


class GcsFeedStorage:
    """Stores a finished feed file as one GCS object (replacing it)."""

    name = "GCSFeedStorage"

    def __init__(self, settings: Mapping[str, Any]) -> None:
        self.project = settings.get("GCS_PROJECT_ID")

    async def store(self, source: Path, target: str) -> None:
        from gcloud.aio.storage import Storage

        bucket, name = split_gs_uri(target)
        body = await asyncio.to_thread(source.read_bytes)
        async with Storage() as client:
            await client.upload(
                bucket, name, body, content_type="application/octet-stream", timeout=TIMEOUT
            )

    async def aclose(self) -> None:
        return None
