"""The contract of a media store (a scheme of ``FilesPipeline.STORE_SCHEMES``) as a
reusable pytest suite: the store is built from its URI and driven the way the files and
images pipelines drive it (``stat_file`` and ``persist_file``, in a thread when marked
``blocking``, awaited when they return an awaitable), so a store that passes works in a
crawl.

Subclass in a test module named ``Test...`` and override the fixtures::

    class TestSftpStore(FilesStoreContract):
        @pytest.fixture
        def store_class(self):
            return SftpFilesStore

        @pytest.fixture
        def store_uri(self, sftp_server):   # where the store keeps its files
            return f"sftp://user:secret@127.0.0.1:{sftp_server.port}/media"

skitter runs the suite against its own stores (tests/pipelines/test_media_contracts.py).
"""

from __future__ import annotations

import asyncio
import hashlib
import inspect
from collections.abc import Awaitable, Callable
from io import BytesIO
from typing import Any

import pytest

from skitter.pipelines.wiring import call_store
from skitter.utils.defer import ensure_awaitable

__all__ = ["FilesStoreContract"]

#: A test's steps on the store under test.
Scenario = Callable[[Any], Awaitable[None]]


def _md5(data: bytes) -> str:
    return hashlib.md5(data, usedforsecurity=False).hexdigest()


class FilesStoreContract:
    """The promises of a media store of Scrapy's API, as a pipeline uses it."""

    @pytest.fixture
    def store_class(self) -> type:
        raise NotImplementedError("override the store_class fixture")

    @pytest.fixture
    def store_uri(self) -> str:
        """The FILES_STORE value the store is built from."""
        raise NotImplementedError("override the store_uri fixture")

    @pytest.fixture
    def store_settings(self) -> dict[str, Any]:
        """The crawl's settings a store reads (an endpoint, credentials): none by default."""
        return {}

    @pytest.fixture
    def run(
        self, store_class: type, store_uri: str, store_settings: dict[str, Any]
    ) -> Callable[[Scenario], None]:
        """Runs a scenario on a store built and opened as the pipeline builds it, and
        closed afterwards, all on one event loop (a store's client may be bound to it)."""

        async def with_store(scenario: Scenario) -> None:
            if "settings" in inspect.signature(store_class).parameters:
                store = store_class(store_uri, settings=store_settings)
            else:
                store = store_class(store_uri)
            opener = getattr(store, "open", None)
            if callable(opener):
                opener()
            try:
                await scenario(store)
            finally:
                closer = getattr(store, "close", None)
                if callable(closer):
                    await ensure_awaitable(closer())

        return lambda scenario: asyncio.run(with_store(scenario))

    def test_a_file_never_stored_has_an_empty_stat(self, run: Callable[[Scenario], None]) -> None:
        async def scenario(store: Any) -> None:
            assert await _stat(store, "full/never-stored.txt") == {}

        run(scenario)

    def test_a_stored_file_is_dated_and_carries_the_md5_of_its_bytes(
        self, run: Callable[[Scenario], None]
    ) -> None:
        async def scenario(store: Any) -> None:
            await _persist(store, "full/one.txt", b"a stored file\n")
            stat = await _stat(store, "full/one.txt")
            assert stat["checksum"] == _md5(b"a stored file\n")
            assert isinstance(stat["last_modified"], int | float)
            assert stat["last_modified"] > 0

        run(scenario)

    def test_storing_again_replaces_the_file(self, run: Callable[[Scenario], None]) -> None:
        async def scenario(store: Any) -> None:
            await _persist(store, "full/again.txt", b"first")
            await _persist(store, "full/again.txt", b"second")
            assert (await _stat(store, "full/again.txt"))["checksum"] == _md5(b"second")

        run(scenario)

    def test_paths_in_different_folders_are_different_files(
        self, run: Callable[[Scenario], None]
    ) -> None:
        async def scenario(store: Any) -> None:
            await _persist(store, "full/same.jpg", b"full size")
            await _persist(store, "thumbs/small/same.jpg", b"thumbnail")
            assert (await _stat(store, "full/same.jpg"))["checksum"] == _md5(b"full size")
            thumb = await _stat(store, "thumbs/small/same.jpg")
            assert thumb["checksum"] == _md5(b"thumbnail")

        run(scenario)

    def test_a_large_binary_file_is_stored_whole(self, run: Callable[[Scenario], None]) -> None:
        data = bytes(range(256)) * 4096  # 1 MiB, every byte value

        async def scenario(store: Any) -> None:
            await _persist(store, "full/large.bin", data)
            assert (await _stat(store, "full/large.bin"))["checksum"] == _md5(data)

        run(scenario)

    def test_meta_and_headers_are_taken(self, run: Callable[[Scenario], None]) -> None:
        async def scenario(store: Any) -> None:
            headers = {"Content-Type": "text/plain"}
            await _persist(store, "full/typed.txt", b"typed", meta={}, headers=headers)
            assert (await _stat(store, "full/typed.txt"))["checksum"] == _md5(b"typed")

        run(scenario)


async def _persist(store: Any, path: str, data: bytes, **kwargs: Any) -> None:
    """``data`` stored at ``path`` as the pipeline stores a download (a BytesIO)."""
    await call_store(store, "persist_file", path, BytesIO(data), None, **kwargs)


async def _stat(store: Any, path: str) -> dict[str, Any]:
    stat = await call_store(store, "stat_file", path, None)
    assert isinstance(stat, dict), f"stat_file returned {stat!r}, not a dict"
    return stat
