"""The file extensions a link extractor skips by default (Scrapy's list)."""

from __future__ import annotations

__all__ = ["IGNORED_EXTENSIONS"]

#: Links to these are not pages: they are not followed unless ``deny_extensions`` says.
IGNORED_EXTENSIONS: list[str] = [
    # archives
    *("7z", "7zip", "bz2", "rar", "tar", "tar.gz", "xz", "zip"),
    # images
    *("mng", "pct", "bmp", "gif", "jpg", "jpeg", "png", "pst", "psp", "tif", "tiff"),
    *("ai", "drw", "dxf", "eps", "ps", "svg", "cdr", "ico", "webp"),
    # audio
    *("mp3", "wma", "ogg", "wav", "ra", "aac", "mid", "au", "aiff"),
    # video
    *("3gp", "asf", "asx", "avi", "mov", "mp4", "mpg", "qt", "rm", "swf", "wmv"),
    *("m4a", "m4v", "flv", "webm"),
    # office suites
    *("xls", "xlsm", "xlsx", "xltm", "xltx", "potm", "potx", "ppt", "pptm", "pptx"),
    *("pps", "doc", "docb", "docm", "docx", "dotm", "dotx", "odt", "ods", "odg", "odp"),
    # other
    *("css", "pdf", "exe", "bin", "rss", "dmg", "iso", "apk", "jar", "sh", "rb", "js"),
    *("hta", "bat", "cpl", "msi", "msp", "py"),
]
