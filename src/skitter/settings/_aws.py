"""S3 access (FILES_STORE / IMAGES_STORE on ``s3://``), botocore's and Scrapy's names."""

from __future__ import annotations

from skitter.settings._setting import Setting

__all__ = ["GROUP"]

GROUP: list[Setting] = [
    Setting("AWS_ACCESS_KEY_ID", None, str, "S3: the access key; None = botocore's own lookup."),
    Setting("AWS_SECRET_ACCESS_KEY", None, str, "S3: the secret key (never logged)."),
    Setting("AWS_SESSION_TOKEN", None, str, "S3: a temporary session token (never logged)."),
    Setting(
        "AWS_ENDPOINT_URL",
        None,
        str,
        "S3: another endpoint (MinIO, moto...); an IP endpoint is addressed path-style.",
    ),
    Setting("AWS_REGION_NAME", None, str, "S3: the region; None = botocore's default."),
    Setting("AWS_USE_SSL", None, bool, "S3: False to talk plain HTTP; None = by endpoint."),
    Setting("AWS_VERIFY", None, bool, "S3: False to skip TLS certificate checks."),
    Setting("AWS_MAX_POOL_CONNECTIONS", 10, int, "S3: connections kept to the endpoint."),
]
