"""A crawl that yields dicts never imports itemadapter (issue 18): itemadapter imports
Scrapy, pydantic and attrs whenever they are installed, 0.4 s and 25 MB where Scrapy
is, and every Scrapy user who ports a project has it installed. Each check runs in a
fresh interpreter, since this one has imported everything already."""

from __future__ import annotations

import json
import subprocess
import sys
import textwrap
from pathlib import Path

CRAWL = textwrap.dedent(
    """
    import asyncio, json, sys
    from aiohttp import web
    from skitter import Spider
    from skitter.crawler import Crawler

    class Shop(Spider):
        name = "shop"
        def parse(self, response):
            for name in response.css("li::text").getall():
                yield {"name": name, "tags": ["a", "b"], "price": 1.5}

    async def main(feed):
        async def page(request):
            return web.Response(text="<ul><li>x</li><li>y</li></ul>", content_type="text/html")
        app = web.Application()
        app.router.add_get("/", page)
        runner = web.AppRunner(app)
        await runner.setup()
        site = web.TCPSite(runner, "127.0.0.1", 0)
        await site.start()
        port = runner.addresses[0][1]
        Shop.start_urls = [f"http://127.0.0.1:{port}/"]
        settings = {"LOG_LEVEL": "WARNING", "FEEDS": {feed: {"format": "jsonlines"}}}
        await Crawler(Shop, settings=settings).run()
        await runner.cleanup()

    asyncio.run(main(sys.argv[1]))
    print(json.dumps(sorted(m for m in ("itemadapter", "scrapy") if m in sys.modules)))
    """
)


def _run(code: str, *args: str) -> list[str]:
    done = subprocess.run(
        [sys.executable, "-c", code, *args], capture_output=True, text=True, timeout=120
    )
    assert done.returncode == 0, done.stderr
    return json.loads(done.stdout.strip().splitlines()[-1])


def test_a_crawl_of_dicts_with_a_feed_imports_no_item_library(tmp_path: Path) -> None:
    feed = tmp_path / "items.jsonl"
    assert _run(CRAWL, str(feed)) == []
    rows = [json.loads(line) for line in feed.read_text().splitlines()]
    assert sorted(row["name"] for row in rows) == ["x", "y"]


def test_an_item_of_another_kind_still_gets_itemadapter() -> None:
    code = textwrap.dedent(
        """
        import dataclasses, json, sys
        from skitter.items import is_item, item_to_dict

        @dataclasses.dataclass
        class Book:
            title: str

        assert is_item({"a": 1}) and not is_item("a") and "itemadapter" not in sys.modules
        assert is_item(Book("x")) and item_to_dict(Book("x")) == {"title": "x"}
        print(json.dumps(["itemadapter"] if "itemadapter" in sys.modules else []))
        """
    )
    assert _run(code) == ["itemadapter"]
