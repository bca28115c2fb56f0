"""The cache storages: entries round-trip, a torn entry is CorruptEntry and never a short
body, concurrent writers and a SIGKILLed writer leave every entry whole."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import threading
import time
from pathlib import Path
from typing import Any

import pytest
from multidict import CIMultiDict

from skitter._clock import FakeClock
from skitter.exceptions import ConfigError
from skitter.extensions.httpcache import (
    CorruptEntry,
    FilesystemCacheStorage,
    SqliteCacheStorage,
    decode_entry,
    encode_entry,
)
from skitter.extensions.httpcache._entry import STORED_AT
from skitter.http import HtmlResponse, Request, Response, TextResponse
from skitter.settings import Settings

STORAGES = [FilesystemCacheStorage, SqliteCacheStorage]


class Named:
    name = "shop"


def make(cls: type, root: Path, **settings: Any) -> Any:
    return cls(Settings(settings), root, FakeClock())


def page(url: str, body: bytes, status: int = 200) -> Response:
    headers = CIMultiDict([("Set-Cookie", "a=1"), ("Set-Cookie", "b=2"), ("X-N", "1")])
    return Response(url, status, headers, body)


@pytest.mark.parametrize("cls", STORAGES)
@pytest.mark.parametrize("use_gzip", [False, True])
def test_round_trip(cls: type, use_gzip: bool, tmp_path: Path) -> None:
    storage = make(cls, tmp_path, HTTPCACHE_GZIP=use_gzip)
    request = Request("http://example.com/a")
    assert storage.retrieve_response(Named(), request) is None
    storage.store_response(Named(), request, page("http://example.com/b", b"\x00body" * 100, 203))
    again = Request("http://example.com/a")
    got = storage.retrieve_response(Named(), again)
    assert (got.url, got.status, got.body) == ("http://example.com/b", 203, b"\x00body" * 100)
    assert got.headers.text_list("Set-Cookie") == ["a=1", "b=2"]
    assert "Date" not in got.headers  # the headers as sent; the time stored is beside them
    assert again.meta[STORED_AT] == storage.clock.time()  # for the RFC 2616 policy
    assert storage.retrieve_response(Named(), Request("http://example.com/other")) is None
    storage.close_spider(Named())


@pytest.mark.parametrize("cls", STORAGES)
def test_expiration(cls: type, tmp_path: Path) -> None:
    storage = make(cls, tmp_path, HTTPCACHE_EXPIRATION_SECS=10)
    request = Request("http://example.com/")
    storage.store_response(Named(), request, page(request.url, b"x"))
    storage.clock.advance(10)
    assert storage.retrieve_response(Named(), request) is not None
    storage.clock.advance(1)
    assert storage.retrieve_response(Named(), request) is None


@pytest.mark.parametrize("use_gzip", [False, True])
def test_every_cut_of_an_entry_is_corrupt(use_gzip: bool) -> None:
    request = Request("http://example.com/")
    data = encode_entry(page(request.url, b"0123456789" * 20), 1.0, use_gzip)
    assert decode_entry(data, request).response.body == b"0123456789" * 20
    for cut in range(len(data)):
        with pytest.raises(CorruptEntry):
            decode_entry(data[:cut], request)
    flipped = bytearray(data)
    flipped[-1] ^= 1
    with pytest.raises(CorruptEntry):
        decode_entry(bytes(flipped), request)


def test_a_damaged_sqlite_database_is_a_clear_error(tmp_path: Path) -> None:
    (tmp_path / "shop.sqlite3").write_bytes(b"this is not a database" * 100)
    storage = make(SqliteCacheStorage, tmp_path)
    with pytest.raises(ConfigError, match=r"shop\.sqlite3 cannot be used"):
        storage.open_spider(Named())


@pytest.mark.parametrize("cls", STORAGES)
def test_concurrent_writers_and_readers_see_whole_entries(cls: type, tmp_path: Path) -> None:
    storage = make(cls, tmp_path)
    request = Request("http://example.com/hot")
    bodies = {bytes([65 + i]) * (50_000 + i) for i in range(8)}
    problems: list[str] = []
    stop = threading.Event()

    def write(body: bytes) -> None:
        for _ in range(30):
            storage.store_response(Named(), request, page(request.url, body))

    def read() -> None:
        while not stop.is_set():
            try:
                got = storage.retrieve_response(Named(), request)
            except CorruptEntry as exc:
                problems.append(str(exc))
                return
            if got is not None and got.body not in bodies:
                problems.append(f"a body of {len(got.body)} bytes")

    readers = [threading.Thread(target=read) for _ in range(3)]
    writers = [threading.Thread(target=write, args=(b,)) for b in bodies]
    for t in readers + writers:
        t.start()
    for t in writers:
        t.join()
    stop.set()
    for t in readers:
        t.join()
    assert problems == []
    assert storage.retrieve_response(Named(), request).body in bodies


WRITER = """
import sys
from pathlib import Path
from skitter.extensions.httpcache import {cls}
from skitter.http import HtmlResponse, Request, Response, TextResponse
from skitter.settings import Settings

class Named:
    name = "shop"

storage = {cls}(Settings({{}}), Path(sys.argv[1]))
n = 0
while True:
    for i in range(20):
        request = Request(f"http://example.com/{{i}}")
        body = bytes([65 + n % 26]) * (200_000 + i)
        storage.store_response(Named(), request, Response(request.url, 200, {{}}, body))
        n += 1
        if n == 40:
            print("ready", flush=True)
"""


@pytest.mark.parametrize("cls", STORAGES)
def test_a_writer_killed_mid_write_leaves_every_entry_whole(cls: type, tmp_path: Path) -> None:
    code = WRITER.format(cls=cls.__name__)
    with subprocess.Popen(
        [sys.executable, "-c", code, str(tmp_path)], stdout=subprocess.PIPE, text=True
    ) as proc:
        try:
            assert proc.stdout is not None and proc.stdout.readline() == "ready\n"
            time.sleep(0.2)  # let it be somewhere in a write; where does not matter
        finally:
            os.kill(proc.pid, signal.SIGKILL)
            proc.wait()
    storage = make(cls, tmp_path)
    for i in range(20):
        got = storage.retrieve_response(Named(), Request(f"http://example.com/{i}"))
        assert got is not None
        assert len(got.body) == 200_000 + i and len(set(got.body)) == 1
    storage.close_spider(Named())


def test_a_cached_page_has_the_class_a_downloaded_one_would() -> None:
    request = Request("http://example.com/")
    html = Response(request.url, 200, {"Content-Type": "text/html; charset=utf-8"}, b"<p>x</p>")
    text = Response(request.url, 200, {"Content-Type": "text/plain"}, b"x")
    assert type(decode_entry(encode_entry(html, 1.0, False), request).response) is HtmlResponse
    assert type(decode_entry(encode_entry(text, 1.0, True), request).response) is TextResponse
