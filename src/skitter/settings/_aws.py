"""S3 credentials and endpoint (Scrapy's AWS_* names): s3:// feeds and media stores."""

from __future__ import annotations

from skitter.settings._setting import Setting

__all__ = ["GROUP"]

GROUP: list[Setting] = [
    Setting("AWS_ACCESS_KEY_ID", None, str, "S3 access key; None = botocore's usual chain."),
    Setting("AWS_SECRET_ACCESS_KEY", None, str, "S3 secret key (never logged or shown)."),
    Setting("AWS_SESSION_TOKEN", None, str, "S3 session token, for temporary credentials."),
    Setting(
        "AWS_ENDPOINT_URL",
        None,
        str,
        "An S3-compatible endpoint (MinIO, Ceph, R2...); by IP or localhost: path-style.",
    ),
    Setting("AWS_REGION_NAME", None, str, "S3 region; None = botocore's default."),
    Setting("AWS_USE_SSL", None, bool, "Whether to use TLS with S3; None = by the endpoint."),
    Setting(
        "AWS_VERIFY",
        None,
        object,
        "Verify S3's certificate: True, False, or a CA bundle path; None = verify.",
    ),
    Setting("AWS_MAX_POOL_CONNECTIONS", 100, int, "Connections the S3 client keeps at most."),
]
