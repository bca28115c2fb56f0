"""A request's ``meta["proxy"] = "http://user:pass@host:port"`` (Scrapy's documented
way) is stored without its password, and is still sent with it: by ``skitter worker``
(Redis), by a resumed job directory and by the media pipelines. Where the process that
downloads a stored request was never given the credentials, the crawl stops with a
non-zero exit status and says how to give them; it never sends the request without.

The proxy is a real forwarding proxy on 127.0.0.1 that answers 407 to a request
without the right ``Proxy-Authorization``; the crawls run as the ``skitter`` command in
their own processes, so that what one process holds in memory is not another's."""

from __future__ import annotations

import asyncio
import base64
import json
import os
import sqlite3
import sys
import textwrap
import time
from pathlib import Path
from typing import Any

import aiohttp
import pytest
from aiohttp import web
from redis.asyncio import Redis

from skitter import Crawler, Request, Spider
from skitter._job import JobDir
from skitter.frontier.redis import ShardedRedisFrontier
from skitter.pipelines.files import FilesPipeline
from skitter.testing._redis import RedisServer, require_redis_server

SRC = str(Path(__file__).resolve().parents[2] / "src")
USER = "prx-user-7f3"
PASSWORD = "pr0xy/Pa55+w0rd"  # a '/' in it, as in half of all generated secrets
QUOTED = "pr0xy%2FPa55+w0rd"  # percent-encoded, as a URI carries it
ITEMS = 6

SPIDER = """
import os

from skitter import Request, Spider


class Shop(Spider):
    name = "shop"
    custom_settings = {"ROBOTSTXT_OBEY": False, "RETRY_TIMES": 0, "CONCURRENT_REQUESTS": 1}

    def start_requests(self):
        proxy = os.environ.get("SHOP_PROXY")
        if proxy:  # a process not given the credentials makes no request of its own
            yield Request(os.environ["SHOP_BASE"] + "/list", meta={"proxy": proxy})

    def parse(self, response):
        if "/item/" in response.url:
            yield {"n": int(response.url.rsplit("/", 1)[1])}
            return
        for n in range(6):  # ITEMS
            yield response.follow(f"/item/{n}", meta={"proxy": response.meta["proxy"]})
"""


class AuthProxy:
    """A forward proxy that demands ``USER:PASSWORD`` (407 otherwise) and forwards the
    rest to the site; it records every request line's path with the credentials it had."""

    def __init__(self) -> None:
        self.seen: list[tuple[str, bool]] = []
        self.app = web.Application()
        self.app.router.add_route("*", "/{tail:.*}", self.handle)

    async def handle(self, request: web.Request) -> web.StreamResponse:
        expected = "Basic " + base64.b64encode(f"{USER}:{PASSWORD}".encode()).decode()
        authorized = request.headers.get("Proxy-Authorization") == expected
        self.seen.append((request.url.path, authorized))
        if not authorized:
            return web.Response(status=407, text="proxy authentication required")
        async with (
            aiohttp.ClientSession() as session,
            session.get(str(request.url), allow_redirects=False) as upstream,
        ):
            body = await upstream.read()
            return web.Response(status=upstream.status, body=body, content_type="text/html")


def site() -> web.Application:
    async def page(request: web.Request) -> web.Response:
        return web.Response(text="<html><p>page</p></html>", content_type="text/html")

    app = web.Application()
    app.router.add_get("/{tail:.*}", page)
    return app


async def skitter(*args: str, env: dict[str, str]) -> tuple[int, str]:
    """Exit status and output (stdout and stderr) of ``python -m skitter ARGS``."""
    base_env = {k: v for k, v in os.environ.items() if not k.startswith(("SKITTER_", "SCRAPY_"))}
    base_env = {k: v for k, v in base_env.items() if not k.lower().endswith("_proxy")}
    proc = await asyncio.create_subprocess_exec(
        sys.executable, "-m", "skitter", *args,
        env={**base_env, "PYTHONPATH": SRC, "COLUMNS": "200", **env},
        stdout=asyncio.subprocess.PIPE, stderr=asyncio.subprocess.STDOUT,
    )  # fmt: skip
    out, _ = await asyncio.wait_for(proc.communicate(), 120)
    assert proc.returncode is not None
    return proc.returncode, out.decode()


@pytest.fixture
async def setup(serve: Any, tmp_path: Path) -> tuple[AuthProxy, str, str, dict[str, str]]:
    """The proxy, the site's base URL, the spider's file and its environment."""
    proxy = AuthProxy()
    base = await serve(site())
    proxy_url = await serve(proxy.app)
    spider = tmp_path / "shop.py"
    spider.write_text(textwrap.dedent(SPIDER))
    env = {"SHOP_BASE": base, "SHOP_PROXY": proxy_url.replace("//", f"//{USER}:{QUOTED}@")}
    return proxy, base, str(spider), env


def given(env: dict[str, str]) -> dict[str, str]:
    """The environment of a process given the proxy's credentials by the setting only."""
    return {**not_given(env), "SKITTER_PROXY_CREDENTIALS": env["SHOP_PROXY"]}


def not_given(env: dict[str, str]) -> dict[str, str]:
    """The environment of a process that has no credentials: its spider starts nothing,
    it only takes up what was stored."""
    return {name: value for name, value in env.items() if name != "SHOP_PROXY"}


def items_in(path: Path) -> list[int]:
    return sorted(json.loads(line)["n"] for line in path.read_text().splitlines())


def assert_no_password(where: str, data: bytes | str) -> None:
    """No password in ``data``; in a store (bytes), not even the user name."""
    raw = data.encode() if isinstance(data, str) else data
    for secret in (PASSWORD, QUOTED, *([USER] if isinstance(data, bytes) else [])):
        assert secret.encode() not in raw, f"{secret} in {where}"


def assert_stopped_for_want_of_credentials(code: int, out: str, proxy_url: str) -> None:
    assert code != 0, out
    assert "PROXY_CREDENTIALS" in out and "was stored without the credentials" in out, out
    assert proxy_url.replace("//", "//***@") in out, out
    assert_no_password("the output", out)


async def all_of_redis(url: str) -> bytes:
    """Every key and value a Redis holds, as one blob to search."""
    client = Redis.from_url(url)
    try:
        blob = b""
        async for key in client.scan_iter():
            blob += key + (await client.dump(key) or b"")
        return blob
    finally:
        await client.aclose()


async def test_a_worker_sends_the_requests_it_stored_with_their_proxy_credentials(
    setup: tuple[AuthProxy, str, str, dict[str, str]], tmp_path: Path
) -> None:
    proxy, _base, spider, env = setup
    with RedisServer(binary=require_redis_server()) as server:
        code, out = await skitter(
            "worker", spider, "--redis", server.url, "--job", "j", "--no-progress",
            "-o", str(tmp_path / "items.jsonl"),
            "-s", "WORKER_IDLE_TIMEOUT=1", "-s", "REDIS_PERSIST=True",
            env=env,
        )  # fmt: skip
        assert code == 0, out
        assert_no_password("Redis", await all_of_redis(server.url))
    assert items_in(tmp_path / "items.jsonl") == list(range(ITEMS))
    assert len(proxy.seen) == ITEMS + 1 and all(ok for _, ok in proxy.seen), proxy.seen
    assert_no_password("the output", out)


async def test_a_worker_not_given_the_credentials_stops_and_the_next_one_given_them_finishes(
    setup: tuple[AuthProxy, str, str, dict[str, str]], tmp_path: Path
) -> None:
    """The requests were stored by another process (pushed from here): a worker that
    was never given their credentials must not send them without."""
    proxy, base, spider, env = setup
    with RedisServer(binary=require_redis_server()) as server:
        frontier = ShardedRedisFrontier(server.url, project="shop", job="j", create=True)
        try:
            await frontier.open_job()
            requests = [
                Request(f"{base}/item/{n}", meta={"proxy": env["SHOP_PROXY"]}) for n in range(ITEMS)
            ]
            await frontier.push(requests, time.time())
        finally:
            await frontier.close()
        assert_no_password("Redis", await all_of_redis(server.url))
        args = (
            "worker", spider, "--redis", server.url, "--job", "j", "--no-progress",
            "-s", "WORKER_IDLE_TIMEOUT=1", "-s", "LEASE_SECONDS=1",
        )  # fmt: skip
        code, out = await skitter(*args, env=not_given(env))
        assert_stopped_for_want_of_credentials(code, out, env["SHOP_PROXY"].split("@")[1])
        assert not any(path.startswith("/item/") for path, _ in proxy.seen), proxy.seen

        feed = tmp_path / "items.jsonl"
        code, out = await skitter(*args, "-o", str(feed), env=given(env))
        assert code == 0, out
        assert_no_password("the output", out)
    assert items_in(feed) == list(range(ITEMS))
    assert all(ok for _, ok in proxy.seen), proxy.seen


async def test_a_resumed_job_sends_its_stored_requests_with_their_proxy_credentials(
    setup: tuple[AuthProxy, str, str, dict[str, str]], tmp_path: Path
) -> None:
    proxy, _base, spider, env = setup
    job, feed = tmp_path / "job", tmp_path / "items.jsonl"
    crawl = ("crawl", spider, "--job-dir", str(job), "--no-progress", "-o", str(feed))
    code, out = await skitter(*crawl, "-s", "CLOSESPIDER_PAGECOUNT=3", env=env)
    assert code == 0, out
    first = items_in(feed)
    assert 0 < len(first) < ITEMS, out
    database = sqlite3.connect(JobDir(job).database)
    try:
        for row in database.execute("SELECT * FROM tasks").fetchall():
            assert_no_password("the job database", repr(row).encode())
    finally:
        database.close()

    # Resumed by a process that was not given the credentials: it stops, sends nothing.
    before = len(proxy.seen)
    code, out = await skitter(*crawl, env=not_given(env))
    assert_stopped_for_want_of_credentials(code, out, env["SHOP_PROXY"].split("@")[1])
    assert len(proxy.seen) == before and items_in(feed) == first

    code, out = await skitter(*crawl, env=given(env))
    assert code == 0, out
    assert items_in(feed) == list(range(ITEMS))
    assert all(ok for _, ok in proxy.seen), proxy.seen


class Media(FilesPipeline):
    """Its media requests go through the spider's proxy, credentials and all."""

    def get_media_requests(self, item: Any, info: Any) -> Any:
        for url in item["file_urls"]:
            yield Request(url, meta={"proxy": item["proxy"]})


class Files(Spider):
    name = "files"

    def start_requests(self) -> Any:
        base, proxy = self.settings["BASE"], self.settings["SPIDER_PROXY"]
        yield Request(f"{base}/list", meta={"proxy": proxy})

    def parse(self, response: Any) -> Any:
        base = self.settings["BASE"]
        proxy = response.meta["proxy"]
        yield {"proxy": proxy, "file_urls": [f"{base}/f{n}.txt" for n in range(ITEMS)]}


async def test_media_requests_are_sent_with_their_proxy_credentials(
    setup: tuple[AuthProxy, str, str, dict[str, str]], tmp_path: Path
) -> None:
    """The media chain is stored in the item's task with the codec: in memory too."""
    proxy, base, _spider, env = setup
    settings = {
        "BASE": base,
        "SPIDER_PROXY": env["SHOP_PROXY"],
        "ITEM_PIPELINES": {Media: 300},
        "FILES_STORE": str(tmp_path / "files"),
        "ROBOTSTXT_OBEY": False,
        "RETRY_TIMES": 0,
        "LOG_LEVEL": "WARNING",
    }
    items: list[Any] = []

    class Collect:
        def process_item(self, item: Any, spider: Spider) -> Any:
            items.append(item)
            return item

    settings["ITEM_PIPELINES"] = {Media: 300, Collect: 900}
    await Crawler(Files, settings).run()
    [item] = items
    assert len(item["files"]) == ITEMS, item
    assert len(proxy.seen) == ITEMS + 1 and all(ok for _, ok in proxy.seen), proxy.seen
