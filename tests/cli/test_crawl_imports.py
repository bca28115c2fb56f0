"""``skitter crawl`` with a JSON-lines feed loads no other command's modules: unittest
and the contracts (``skitter check``), webbrowser (``skitter view``), the shell; nor the
subsystems it does not switch on: the job directory's SQLite frontier, the HTTP cache's
storages, sqlite3, smtplib (mailed alerts). (zipfile is not in the list: LOG_VERSIONS,
on by default as in Scrapy, reads the installed versions through importlib.metadata,
which imports it.) Run in a fresh interpreter, since this one has imported everything
already."""

from __future__ import annotations

import asyncio
import json
import sys
import textwrap
from pathlib import Path

from aiohttp import web

SPIDER = textwrap.dedent(
    """
    from skitter import Spider

    class Shop(Spider):
        name = "shop"

        def __init__(self, url, **kwargs):
            super().__init__(**kwargs)
            self.start_urls = [url]

        def parse(self, response):
            for name in response.css("li::text").getall():
                yield {"name": name}
    """
)

RUN = textwrap.dedent(
    """
    import json, sys
    from skitter.cli import main

    status = main(sys.argv[1:])
    loaded = (
        "unittest",
        "webbrowser",
        "skitter.contracts",
        "skitter.shell",
        "skitter.frontier._sqlite",
        "skitter.extensions.httpcache._storage",
        "sqlite3",
        "smtplib",
    )
    print(json.dumps([status, sorted(m for m in loaded if m in sys.modules)]))
    """
)


async def test_a_plain_crawl_loads_no_other_commands_modules(serve, tmp_path: Path) -> None:
    async def page(request: web.Request) -> web.Response:
        return web.Response(text="<ul><li>x</li><li>y</li></ul>", content_type="text/html")

    app = web.Application()
    app.router.add_get("/", page)
    base = await serve(app)
    spider, feed = tmp_path / "shop.py", tmp_path / "items.jsonl"
    spider.write_text(SPIDER)
    args = ["crawl", str(spider), "-o", str(feed), "-a", f"url={base}/", "-L", "WARNING"]
    proc = await asyncio.create_subprocess_exec(
        sys.executable, "-c", RUN, *args, stdout=asyncio.subprocess.PIPE, cwd=tmp_path
    )
    out, _ = await proc.communicate()
    assert json.loads(out.decode().strip().splitlines()[-1]) == [0, []]
    assert sorted(json.loads(line)["name"] for line in feed.read_text().splitlines()) == [
        "x",
        "y",
    ]
