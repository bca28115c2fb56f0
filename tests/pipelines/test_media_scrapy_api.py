"""Scrapy's media pipeline API in a real crawl: the hooks a subclass overrides are the
ones the crawl's media tasks call, a subclass's own settings are honoured (and not
taken for typos), and an ftp:// store (pyftpdlib on 127.0.0.1) keeps and dates files;
and ``process_item`` called directly, as a Scrapy unit test does."""

from __future__ import annotations

import hashlib
from collections import Counter
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from skitter.exceptions import ConfigError, ConnectionLost
from skitter.http import Request, Response
from skitter.pipelines.files import FilesPipeline
from skitter.utils.misc import build_from_crawler
from skitter.utils.test import get_crawler

from ._ftp_server import SECRET, ftp_server
from ._media_site import MediaSite, crawl


def sha1(url: str) -> str:
    return hashlib.sha1(url.encode()).hexdigest()


class SkipPdfs(FilesPipeline):
    """Answers ``.pdf`` URLs without downloading them (``media_to_download``), and reads
    its result field from its own setting (``SKIPPDFS_FILES_RESULT_FIELD``)."""

    def media_to_download(self, request: Any, info: Any, *, item: Any = None) -> Any:
        if request.url.endswith(".pdf"):
            return {"url": request.url, "status": "skipped"}
        return super().media_to_download(request, info, item=item)


async def test_a_subclass_hooks_and_own_settings_are_the_crawls(serve: Any, tmp_path: Path) -> None:
    site = MediaSite({"/a.txt": ("text/plain", b"a"), "/b.pdf": ("application/pdf", b"b")})
    base = await serve(site.app)
    site.items = [{"name": "one", "file_urls": [f"{base}/a.txt", f"{base}/b.pdf"]}]
    settings = {"BASE": base, "ITEM_PIPELINES": {SkipPdfs: 300},
                "FILES_STORE": str(tmp_path), "SKIPPDFS_FILES_RESULT_FIELD": "stored"}  # fmt: skip
    [item], stats = await crawl(settings)
    assert [entry["status"] for entry in item["stored"]] == ["downloaded", "skipped"]
    assert "files" not in item
    assert site.hits["/b.pdf"] == 0  # answered by the hook, never fetched
    assert stats["file_status_count/downloaded"] == 1


def test_a_pipeline_class_setting_is_read_and_a_typo_of_one_still_refused(
    tmp_path: Path,
) -> None:
    crawler = get_crawler(None, {"FILES_STORE": str(tmp_path), "SKIPPDFS_FILES_EXPIRES": 3})
    assert build_from_crawler(SkipPdfs, crawler).expires == 3
    assert build_from_crawler(FilesPipeline, crawler).expires == 90  # not its setting
    with pytest.raises(ConfigError, match="did you mean 'FILES_EXPIRES'"):
        get_crawler(None, {"FILES_STORE": str(tmp_path), "FILES_EXPIRE": 3})


@pytest.fixture
def ftp(tmp_path: Path) -> Iterator[tuple[int, Path]]:
    home = tmp_path / "ftp"
    with ftp_server(home) as port:
        yield port, home


async def test_files_go_to_ftp_and_a_second_crawl_finds_them_up_to_date(
    serve: Any, ftp: tuple[int, Path], caplog: pytest.LogCaptureFixture
) -> None:
    port, home = ftp
    site = MediaSite({"/doc.txt": ("text/plain", b"on ftp")})
    base = await serve(site.app)
    site.items = [{"name": "one", "file_urls": [f"{base}/doc.txt"]}]
    settings = {"BASE": base, "ITEM_PIPELINES": {FilesPipeline: 300},
                "FILES_STORE": f"ftp://user:{SECRET}@127.0.0.1:{port}/media"}  # fmt: skip
    [item], _ = await crawl(settings)
    [stored] = item["files"]
    assert stored["status"] == "downloaded"
    assert (home / "media" / stored["path"]).read_bytes() == b"on ftp"
    [again], stats = await crawl(settings)
    assert again["files"][0]["status"] == "uptodate"
    assert again["files"][0]["checksum"] == stored["checksum"]
    assert site.hits["/doc.txt"] == 1
    assert stats["file_status_count/uptodate"] == 1
    assert SECRET not in caplog.text


class AnsweringEngine:
    """Scrapy's ``crawler.engine.download_async``, answered from a dict (the network is
    not the subject: what the pipeline does with the answers is), counting calls."""

    def __init__(self, answers: dict[str, Response | Exception]) -> None:
        self.answers = answers
        self.calls: Counter[str] = Counter()

    async def download_async(self, request: Request) -> Response:
        self.calls[request.url] += 1
        answer = self.answers[request.url]
        if isinstance(answer, Exception):
            raise answer
        return answer


async def test_process_item_called_directly_downloads_through_the_engine_once_per_url(
    tmp_path: Path,
) -> None:
    good, bad = "http://example.com/a.txt", "http://example.com/b.txt"
    engine = AnsweringEngine({good: Response(good, body=b"a"), bad: ConnectionLost("reset")})
    crawler = get_crawler(None, {"FILES_STORE": str(tmp_path)})
    crawler.engine = engine  # type: ignore[assignment]
    pipe = build_from_crawler(FilesPipeline, crawler)
    pipe.open_spider()
    first = await pipe.process_item({"file_urls": [good, bad]})
    second = await pipe.process_item({"file_urls": [good, bad]})
    assert [entry["status"] for entry in first["files"]] == ["downloaded"]
    assert second["files"] == first["files"]  # the cached results, failure included
    assert engine.calls == {good: 1, bad: 1}
    assert (tmp_path / first["files"][0]["path"]).read_bytes() == b"a"
