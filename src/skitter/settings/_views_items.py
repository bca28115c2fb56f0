"""Typed views of where items go: the item pipelines and their validation, feeds,
sinks, the Redis items pipeline, media downloads.

Field types follow the declarations (``_feeds``, ``_items``, ``_sinks``, ``_media``,
``_aws``); a test keeps the two in step. Each view is built once per resolved Settings.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Mapping
from typing import Any

from skitter.settings._views import View

__all__ = ["AwsSettings", "FeedSettings", "ItemSettings", "MediaSettings"]


@dataclasses.dataclass(frozen=True, slots=True)
class FeedSettings(View):
    """The feeds, their exporters and storages, and where they are staged."""

    feeds: Mapping[str, Any]
    feed_uri: Any  # Scrapy's older single feed (a URI or a path)
    feed_format: str
    feed_tempdir: str | None
    feed_exporters: Mapping[str, Any]
    feed_storages: Mapping[str, Any]
    feed_storage_ftp_active: bool
    gcs_project_id: str | None
    feed_storage_s3_acl: str | None


@dataclasses.dataclass(frozen=True, slots=True)
class ItemSettings(View):
    """The item pipelines, item validation, sinks and the Redis items pipeline."""

    item_pipelines: Mapping[Any, int | None]
    validation_schemas: Any  # a list of files, or {item class: file(s)}
    validation_invalid: str
    validation_invalid_feed: Any  # a URI, or {uri: FEEDS options}
    validation_samples: int
    sinks: Mapping[str, Any]
    sink_batch_size: int
    sink_batch_delay: float
    sink_outage_timeout: float
    redis_items_url: str | None
    redis_items_key: str
    redis_items_type: str
    redis_items_format: str
    redis_items_maxlen: int
    redis_items_outage_timeout: float
    redis_cluster: bool
    redis_sentinel_master: str


@dataclasses.dataclass(frozen=True, slots=True)
class MediaSettings(View):
    """The files and images pipelines'."""

    media_allow_redirects: bool
    images_min_width: int
    images_min_height: int
    images_max_pixels: int
    images_thumbs: Mapping[str, Any]


@dataclasses.dataclass(frozen=True, slots=True)
class AwsSettings(View):
    """The S3 client of feed storages and media stores (botocore's chain when None)."""

    aws_access_key_id: str | None
    aws_secret_access_key: str | None
    aws_session_token: str | None
    aws_endpoint_url: str | None
    aws_region_name: str | None
    aws_max_pool_connections: int
