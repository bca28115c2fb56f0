"""The files and images pipelines (``skitter.pipelines.files``/``images``), Scrapy's names."""

from __future__ import annotations

from skitter.settings._setting import Setting

__all__ = ["GROUP", "PER_CLASS", "is_per_class"]

#: The media settings a pipeline subclass reads under its own name first, as in Scrapy:
#: ``MYPIPELINE_FILES_EXPIRES`` for ``class MyPipeline(FilesPipeline)``.
PER_CLASS = (
    "FILES_EXPIRES",
    "FILES_URLS_FIELD",
    "FILES_RESULT_FIELD",
    "IMAGES_EXPIRES",
    "IMAGES_URLS_FIELD",
    "IMAGES_RESULT_FIELD",
    "IMAGES_MIN_WIDTH",
    "IMAGES_MIN_HEIGHT",
    "IMAGES_THUMBS",
    "MEDIA_ALLOW_REDIRECTS",
)


def is_per_class(name: str) -> bool:
    """Whether ``name`` is a media setting given for one pipeline class
    (``<CLASSNAME>_<setting>``): not a typo of the setting, whichever class it names."""
    return any(
        name.endswith(f"_{key}") and name[: -len(key) - 1].isidentifier() for key in PER_CLASS
    )


GROUP: list[Setting] = [
    Setting(
        "FILES_STORE",
        None,
        str,
        "FilesPipeline: where files go, a directory, s3://bucket/prefix (skitter[s3]) or "
        "ftp://user:password@host/dir; "
        "the pipeline refuses to start without it.",
    ),
    Setting(
        "FILES_EXPIRES",
        90,
        int,
        "FilesPipeline: days a stored file stays up to date (not downloaded again).",
    ),
    Setting("FILES_URLS_FIELD", "file_urls", str, "FilesPipeline: the item field of URLs."),
    Setting("FILES_RESULT_FIELD", "files", str, "FilesPipeline: the item field of results."),
    Setting(
        "IMAGES_STORE",
        None,
        str,
        "ImagesPipeline (skitter[images]): where images go, a directory, "
        "s3://bucket/prefix or ftp://user:password@host/dir; the pipeline refuses to "
        "start without it.",
    ),
    Setting(
        "IMAGES_EXPIRES",
        90,
        int,
        "ImagesPipeline: days a stored image stays up to date (not downloaded again).",
    ),
    Setting("IMAGES_URLS_FIELD", "image_urls", str, "ImagesPipeline: the item field of URLs."),
    Setting("IMAGES_RESULT_FIELD", "images", str, "ImagesPipeline: the item field of results."),
    Setting(
        "IMAGES_THUMBS",
        {},
        dict,
        "ImagesPipeline: thumbnails, {name: (width, height)}, stored as JPEG under thumbs/<name>/.",
    ),
    Setting(
        "IMAGES_MIN_WIDTH", 0, int, "ImagesPipeline: narrower images are dropped from results."
    ),
    Setting("IMAGES_MIN_HEIGHT", 0, int, "ImagesPipeline: lower images are dropped from results."),
    Setting(
        "IMAGES_MAX_PIXELS",
        25_000_000,
        int,
        "ImagesPipeline: images of more pixels (width x height, read from the header before "
        "decoding) are refused, logged, counted in images/too_many_pixels and not stored: "
        "a small file can decode to gigabytes. 25 MP is a 5000x5000 image.",
    ),
    Setting(
        "FILES_STORE_S3_ACL",
        None,
        str,
        "FilesPipeline: the canned ACL of the objects an s3:// store writes (None: the "
        "bucket's default).",
    ),
    Setting(
        "IMAGES_STORE_S3_ACL",
        None,
        str,
        "ImagesPipeline: the canned ACL of the objects an s3:// store writes (None: the "
        "bucket's default).",
    ),
    Setting(
        "MEDIA_ALLOW_REDIRECTS",
        False,
        bool,
        "Files and images: follow redirects of media URLs (off: a 3xx is a failed file).",
    ),
]
