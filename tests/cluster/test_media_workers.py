"""Media tasks in a Redis job: two workers share the items' media chains (each link a
task any worker may lease, the item carried in the stored request), and every item
comes out once, with all its files."""

from __future__ import annotations

import asyncio
import hashlib
import json
from pathlib import Path
from typing import Any

from aiohttp import web

from skitter import Crawler, Request, Spider
from skitter.pipelines.files import FilesPipeline

ITEMS = 10


class Catalogue(Spider):
    name = "catalogue"

    def start_requests(self) -> Any:
        yield Request(self.settings["BASE"] + "/items")

    def parse(self, response: Any) -> Any:
        base = self.settings["BASE"]
        for n in range(ITEMS):
            yield {"n": n, "file_urls": [f"{base}/f/{n}-{k}.txt" for k in range(3)]}


async def test_two_workers_finish_every_item_once_with_its_files(
    serve: Any, redis_url: str, tmp_path: Path
) -> None:
    hits: dict[str, int] = {}

    async def handle(request: web.Request) -> web.Response:
        hits[request.path] = hits.get(request.path, 0) + 1
        if request.path == "/items":
            return web.Response(text="the catalogue")
        await asyncio.sleep(0.05)  # the site's own pace, so that both workers get media
        return web.Response(body=request.path.encode(), content_type="text/plain")

    app = web.Application()
    app.router.add_get("/{tail:.*}", handle)
    base = await serve(app)
    store = tmp_path / "store"

    def worker(n: int) -> Any:
        settings = {"BASE": base, "ITEM_PIPELINES": {FilesPipeline: 1},
                    "FILES_STORE": str(store), "FEEDS": {str(tmp_path / f"w{n}.jsonl"): {}},
                    "CONCURRENT_REQUESTS": 1, "LOG_LEVEL": "WARNING"}  # fmt: skip
        return Crawler(Catalogue, settings, redis_url=redis_url, job="media").run()

    first, second = await asyncio.wait_for(asyncio.gather(worker(1), worker(2)), 50)
    items = [
        json.loads(line)
        for n in (1, 2)
        for line in (tmp_path / f"w{n}.jsonl").read_text().splitlines()
    ]
    assert sorted(item["n"] for item in items) == list(range(ITEMS))
    for item in items:
        urls = [f"{base}/f/{item['n']}-{k}.txt" for k in range(3)]
        assert [f["url"] for f in item["files"]] == urls
        for stored in item["files"]:
            body = (store / stored["path"]).read_bytes()
            assert stored["checksum"] == hashlib.md5(body).hexdigest()
    assert all(count == 1 for count in hits.values())
    # Both workers fetched media (each holds at most 2 * CONCURRENT_REQUESTS leased
    # tasks, so neither can take all ten chains): the chains are the job's tasks.
    assert first["file_count"] > 0 and second["file_count"] > 0
