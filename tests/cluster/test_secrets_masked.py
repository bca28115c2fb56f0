"""No secret a user passes is printed or shown: everything a worker, ``skitter push``,
``skitter dashboard`` (console, HTML, JSON, /metrics) and a proxied crawl print or
write is searched for the Redis password, the proxy's credentials, a feed URI's
password and an AWS key, on their success paths and their failure paths."""

from __future__ import annotations

import asyncio
import base64
import os
import signal
import sys
import textwrap
from pathlib import Path
from typing import Any

import aiohttp
import pytest
from aiohttp import web

from skitter.testing._redis import RedisServer, require_redis_server

SRC = str(Path(__file__).resolve().parents[2] / "src")
REDIS_PASSWORD = "Redis-Pa55-4f1e"
WRONG_PASSWORD = "Wr0ng-Pa55-9b2c"
PROXY_PASSWORD = "Pr0xy-Pa55-77d0"
FEED_PASSWORD = "Feed-Pa55-c3a1"
AWS_SECRET = "AWSsecretKEY-0c8e"
SECRETS = [
    REDIS_PASSWORD,
    WRONG_PASSWORD,
    PROXY_PASSWORD,
    base64.b64encode(f"bob:{PROXY_PASSWORD}".encode()).decode(),  # Proxy-Authorization
    FEED_PASSWORD,
    AWS_SECRET,
]

SPIDER = """
from skitter import Request, Spider


class Shop(Spider):
    name = "shop"

    def start_requests(self):
        base = self.settings["BASE"]
        yield Request(base + "/page/1")
        # through https_proxy, whose CONNECT fails: aiohttp quotes the proxy URL
        yield Request(base.replace("http://", "https://") + "/secure", errback=self.failed)

    def parse(self, response):
        yield {"url": response.url}

    def failed(self, failure):
        # what a spider author writes: the message and the whole traceback
        self.logger.error("Failed: %s", failure, exc_info=failure)
"""


def site() -> web.Application:
    async def page(request: web.Request) -> web.Response:
        return web.Response(text="<p>ok</p>", content_type="text/html")

    app = web.Application()
    app.router.add_get("/{tail:.*}", page)
    return app


def proxy() -> web.Application:
    """A proxy that refuses every CONNECT (aiohttp's server answers it 404)."""
    return web.Application()


async def run(*args: str, env: dict[str, str] | None = None) -> tuple[int, str]:
    proc = await asyncio.create_subprocess_exec(
        sys.executable, "-m", "skitter", *args,
        env={**os.environ, "PYTHONPATH": SRC, "COLUMNS": "120", **(env or {})},
        stdout=asyncio.subprocess.PIPE, stderr=asyncio.subprocess.STDOUT,
    )  # fmt: skip
    out, _ = await asyncio.wait_for(proc.communicate(), 60)
    assert proc.returncode is not None
    return proc.returncode, out.decode()


async def dashboard_pages(url: str) -> tuple[str, list[str]]:
    """Run ``skitter dashboard``, read what it serves, stop it: its console output and
    the bodies of its pages."""
    proc = await asyncio.create_subprocess_exec(
        sys.executable, "-m", "skitter", "dashboard", "--redis", url,
        env={**os.environ, "PYTHONPATH": SRC, "COLUMNS": "120"},
        stdout=asyncio.subprocess.PIPE, stderr=asyncio.subprocess.STDOUT,
    )  # fmt: skip
    assert proc.stdout is not None
    printed = []
    async with asyncio.timeout(30):
        while not any("Dashboard: " in line for line in printed):
            printed.append((await proc.stdout.readline()).decode())
        printed.append((await proc.stdout.readline()).decode())  # "Jobs on ...: names"
    ui = next(line for line in printed if "Dashboard: " in line).split("Dashboard: ")[1].split()[0]
    bodies = []
    async with aiohttp.ClientSession() as http:
        async with http.get(ui + "api/projects") as resp:
            projects = await resp.json()
            bodies.append(await resp.text())
        names = [project["name"] for project in projects]
        assert names == ["shop:nightly"], names
        paths = ["", "api/overview", "metrics", "api/projects/shop:nightly/detail"]
        for path in paths:
            async with http.get(ui + path) as resp:
                assert resp.status == 200, path
                bodies.append(await resp.text())
    proc.send_signal(signal.SIGTERM)
    rest, _ = await asyncio.wait_for(proc.communicate(), 30)
    return "".join(printed) + rest.decode(), bodies


def assert_no_secret(where: str, text: str) -> None:
    squeezed = "".join(text.split())  # a console may wrap a long line inside a word
    for secret in SECRETS:
        assert secret not in text and secret not in squeezed, f"{secret} in {where}:\n{text}"


@pytest.fixture
def locked() -> Any:
    with RedisServer(binary=require_redis_server(), password=REDIS_PASSWORD) as server:
        yield server


async def test_no_secret_is_printed_shown_or_written_anywhere(
    serve: Any, tmp_path: Path, locked: RedisServer
) -> None:
    base = await serve(site())
    proxy_url = (await serve(proxy())).replace("http://", f"http://bob:{PROXY_PASSWORD}@")
    url = locked.url.replace("redis://", f"redis://:{REDIS_PASSWORD}@")
    spider = tmp_path / "shop.py"
    spider.write_text(textwrap.dedent(SPIDER))
    seen: dict[str, str] = {}

    # A worker, with everything it logs (DEBUG), its stats and feed, through a proxy.
    stats = tmp_path / "stats.json"
    code, seen["worker"] = await run(
        "worker", str(spider), "--redis", url, "--job", "nightly", "-L", "DEBUG",
        "-o", str(tmp_path / "items.jsonl"), "--stats-json", str(stats), "--no-progress",
        "-s", f"BASE={base}", "-s", "WORKER_IDLE_TIMEOUT=1", "-s", "RETRY_TIMES=0",
        env={"https_proxy": proxy_url, "no_proxy": ""},
    )  # fmt: skip
    assert code == 0, seen["worker"]
    # it says which Redis it joined, without the password
    assert f"joining job 'nightly' on redis://127.0.0.1:{locked.port}/0" in seen["worker"]
    assert (
        "cannot connect: 404, message='Not Found', url='http://bob:***@127.0.0.1" in seen["worker"]
    )
    seen["stats"] = stats.read_text()
    seen["items"] = (tmp_path / "items.jsonl").read_text()

    code, seen["push"] = await run(
        "push", f"{base}/page/2", "--redis", url, "--job", "nightly", "--spider", "shop"
    )
    assert code == 0, seen["push"]

    console, bodies = await dashboard_pages(url)
    seen["dashboard console"] = console
    assert "redis://:***@" in console
    for n, body in enumerate(bodies):
        seen[f"dashboard page {n}"] = body

    # Failure paths: a wrong password, Redis out of reach, a feed URI, an AWS key (an S3
    # setting now: a bad one beside it fails the start) and a refused secret setting.
    wrong = locked.url.replace("redis://", f"redis://:{WRONG_PASSWORD}@")
    gone = f"redis://:{REDIS_PASSWORD}@127.0.0.1:1/0"
    failures = {
        "worker, wrong password": ("worker", str(spider), "--redis", wrong, "--job", "nightly"),
        "push, wrong password": ("push", f"{base}/x", "--redis", wrong, "--job", "nightly",
                                 "--spider", "shop"),
        "dashboard, wrong password": ("dashboard", "--redis", wrong),
        "dashboard, unreachable": ("dashboard", "--redis", gone),
        "feed URI": ("crawl", str(spider), "-o", f"sftp://user:{FEED_PASSWORD}@host/items.jsonl"),
        "AWS key from the environment": ("crawl", str(spider), "-s",
                                         "AWS_MAX_POOL_CONNECTIONS=many"),
        "refused secret": ("crawl", str(spider), "-s", f"FTP_PASSWORD={AWS_SECRET}"),
    }  # fmt: skip
    for name, args in failures.items():
        env = {"SKITTER_AWS_SECRET_ACCESS_KEY": AWS_SECRET} if "environment" in name else None
        code, seen[name] = await run(*args, env=env)
        assert code == 2, (name, seen[name])
        assert "Traceback" not in seen[name], (name, seen[name])
    assert "sftp://user:***@host/items.jsonl" in seen["feed URI"]
    assert "AWS_MAX_POOL_CONNECTIONS" in seen["AWS key from the environment"]
    assert "FTP_PASSWORD ('***')" in seen["refused secret"]

    for where, text in seen.items():
        assert_no_secret(where, text)
