"""A running ``skitter server``, a project to deploy to it (a skitter project with a
``scrapy.cfg`` deploy target, as a Scrapy team has), a site for its spider, and the
real ``scrapyd-deploy`` to deploy with."""

from __future__ import annotations

import asyncio
import os
import sys
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import aiohttp
import pytest
from aiohttp import web

from skitter.cli._generate import startproject
from skitter.server import Server, ServerOptions
from skitter.testing import wait_until

SRC = str(Path(__file__).resolve().parents[2] / "src")

SPIDER = """
import skitter


class ProductsSpider(skitter.Spider):
    name = "products"
    custom_settings = {"ROBOTSTXT_OBEY": False}

    def __init__(self, shop="", **kwargs):
        super().__init__(**kwargs)
        self.shop = shop

    def start_requests(self):
        self.logger.info("cache at redis://shop:hunter2@cache.example:6379/0")
        yield skitter.Request(self.shop)

    def parse(self, response):
        for href in response.css("a::attr(href)").getall():
            yield response.follow(href, self.parse_product)

    def parse_product(self, response):
        yield {"url": response.url, "name": response.css("h1::text").get(),
               "price": float(response.css(".price::text").get())}
"""

PRODUCTS = {"1": ("Red kettle", 25.0), "2": ("Blue kettle", 27.5), "3": ("Green teapot", 12.0)}


def shop_site(*, broken: bool = False) -> web.Application:
    """The three products; ``broken``: the index links to a fourth that fails (503)."""

    async def index(request: web.Request) -> web.Response:
        links = "".join(f'<a href="/p/{n}">{n}</a>' for n in [*PRODUCTS, *("9" * broken)])
        return web.Response(text=f"<html><body>{links}</body></html>", content_type="text/html")

    async def product(request: web.Request) -> web.Response:
        if request.match_info["n"] not in PRODUCTS:
            raise web.HTTPServiceUnavailable()
        name, price = PRODUCTS[request.match_info["n"]]
        body = f'<html><body><h1>{name}</h1><span class="price">{price}</span></body></html>'
        return web.Response(text=body, content_type="text/html")

    app = web.Application()
    app.router.add_get("/", index)
    app.router.add_get("/p/{n}", product)
    return app


@pytest.fixture
async def server(tmp_path: Path) -> AsyncIterator[Server]:
    options = ServerOptions(data_dir=tmp_path / "data", port=0, max_proc=2)
    async with Server(options) as running:
        yield running


def make_project(root: Path, url: str, name: str = "shopbot") -> Path:
    """A skitter project (``startproject``) with the spider above and a ``scrapy.cfg``
    whose deploy target is ``url``."""
    startproject(name, root)
    (root / name / "spiders" / "products.py").write_text(SPIDER)
    (root / "scrapy.cfg").write_text(
        f"[settings]\ndefault = {name}.settings\n\n[deploy]\nurl = {url}\nproject = {name}\n"
    )
    return root


def _unavailable(reason: str) -> None:
    if os.environ.get("CI", "").lower() == "true":
        pytest.fail(reason)
    pytest.skip(reason)


async def scrapyd_deploy(project: Path, *args: str) -> tuple[int, str, str]:
    """Run the real ``scrapyd-deploy`` in ``project``: exit status, stdout, stderr."""
    command = Path(sys.executable).with_name("scrapyd-deploy")
    if not command.exists():
        _unavailable("scrapyd-client is missing: pip install -e '.[test]'")
    env = {k: v for k, v in os.environ.items() if not k.startswith(("SKITTER_", "SCRAPY_"))}
    proc = await asyncio.create_subprocess_exec(
        str(command), *args, cwd=project, env={**env, "PYTHONPATH": SRC},
        stdout=asyncio.subprocess.PIPE, stderr=asyncio.subprocess.PIPE,
    )  # fmt: skip
    out, err = await asyncio.wait_for(proc.communicate(), timeout=120)
    assert proc.returncode is not None
    return proc.returncode, out.decode(), err.decode()


async def api(url: str, path: str, data: Any = None, **kwargs: Any) -> tuple[int, Any]:
    """GET (or POST ``data``) a path of the service: (status, JSON or text)."""
    async with aiohttp.ClientSession() as session:
        method = "POST" if data is not None else "GET"
        async with session.request(method, url + path, data=data, **kwargs) as response:
            if response.content_type == "application/json":
                return response.status, await response.json()
            return response.status, await response.text()


async def wait_for_job(url: str, job: str, state: str = "finished") -> dict[str, Any]:
    """Poll ``listjobs.json`` until ``job`` is in ``state`` (a run takes seconds)."""

    async def listed() -> dict[str, Any] | None:
        _, jobs = await api(url, "listjobs.json")
        return next((dict(entry) for entry in jobs[state] if entry["id"] == job), None)

    try:
        return await wait_until(listed, timeout=60)
    except TimeoutError:
        _, jobs = await api(url, "listjobs.json")
        raise AssertionError(f"job {job} never reached {state}: {jobs}") from None


class HangingSite:
    """``/`` links to ``/hang``, which answers only once ``release`` is set: a run of
    the spider above stays running until the test lets it end."""

    def __init__(self) -> None:
        self.release = asyncio.Event()
        self.waiting = 0
        self.app = web.Application()
        self.app.router.add_get("/", self.index)
        self.app.router.add_get("/hang", self.hang)

    async def index(self, request: web.Request) -> web.Response:
        return web.Response(text='<a href="/hang">x</a>', content_type="text/html")

    async def hang(self, request: web.Request) -> web.Response:
        self.waiting += 1
        await self.release.wait()
        body = '<h1>Slow</h1><span class="price">1</span>'
        return web.Response(text=body, content_type="text/html")


async def deploy_directory(url: str, project: Path, name: str = "shopbot") -> None:
    """Deploy ``project`` as a directory (no egg to build: faster than scrapyd-deploy)."""
    form = {"project": name, "version": "v1", "directory": str(project)}
    status, answer = await api(url, "addversion.json", data=form)
    assert (status, answer["status"]) == (200, "ok"), answer


async def schedule(url: str, shop: str, **extra: str) -> str:
    form = {"project": "shopbot", "spider": "products", "shop": shop, **extra}
    status, answer = await api(url, "schedule.json", data=form)
    assert (status, answer["status"]) == (200, "ok"), answer
    return str(answer["jobid"])
