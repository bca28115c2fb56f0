"""CrawlerRunner and CrawlerProcess: crawls run from a script, as Scrapy's docs show."""

from __future__ import annotations

import asyncio
import json
import sys
from typing import Any

import pytest
from aiohttp import web

from skitter import CrawlFailed, Response, Spider
from skitter.crawler import Crawler, CrawlerProcess, CrawlerRunner


def site() -> web.Application:
    async def handle(request: web.Request) -> web.Response:
        return web.Response(text=f"<p>{request.path}</p>", content_type="text/html")

    app = web.Application()
    app.router.add_get("/{tail:.*}", handle)
    return app


class Pages(Spider):
    name = "pages"
    path = "/"

    def start_requests(self) -> Any:
        from skitter import Request

        yield Request(self.base + self.path)  # type: ignore[attr-defined]

    def parse(self, response: Response) -> Any:
        yield {"text": response.css("p::text").get(), "spider": self.name}


async def test_crawler_runner_runs_crawls_side_by_side(serve: Any) -> None:
    base = await serve(site())
    runner = CrawlerRunner({"CONCURRENT_REQUESTS": 2})
    first = runner.crawl(Pages, base=base, path="/one")
    second = runner.crawl(Crawler(Pages, {"BOT_NAME": "other"}, base=base, path="/two"))
    assert len(runner.crawlers) == 2
    await runner.join()
    assert first.result()["item_scraped_count"] == 1
    assert second.result()["item_scraped_count"] == 1
    assert runner.crawlers == set()
    with pytest.raises(TypeError, match="Crawler"):
        runner.crawl(Crawler(Pages), base=base)


SCRIPT = """
import json, sys
from skitter import Spider
from skitter.crawler import CrawlerProcess

class Pages(Spider):
    name = "pages"

    def parse(self, response):
        yield {"text": response.css("p::text").get()}

process = CrawlerProcess({"FEEDS": {sys.argv[2]: {"format": "jsonl"}}})
process.crawl(Pages, start_urls=[sys.argv[1] + "/a"])
process.crawl(Pages, name="again", start_urls=[sys.argv[1] + "/b"])
process.start()
print(json.dumps([type(f).__name__ for f in process.failures]))
"""


async def test_crawler_process_runs_a_script_to_the_end(serve: Any, tmp_path: Any) -> None:
    base = await serve(site())
    out = tmp_path / "%(name)s.jsonl"
    script = tmp_path / "run.py"
    script.write_text(SCRIPT)
    proc = await asyncio.create_subprocess_exec(
        sys.executable,
        str(script),
        base,
        str(out),
        stdout=asyncio.subprocess.PIPE,
        stderr=asyncio.subprocess.PIPE,
    )
    stdout, stderr = await asyncio.wait_for(proc.communicate(), 50)
    assert proc.returncode == 0, stderr.decode()
    assert json.loads(stdout) == []
    assert "[skitter.crawler] INFO" in stderr.decode()  # the root handler it installed
    for name, text in (("pages", "/a"), ("again", "/b")):
        lines = (tmp_path / f"{name}.jsonl").read_text().splitlines()
        assert [json.loads(line)["text"] for line in lines] == [text]


def test_crawler_process_logs_a_failed_crawl_and_goes_on(tmp_path: Any) -> None:
    class Broken(Spider):
        name = "broken"

        async def start(self) -> Any:
            raise RuntimeError("start broke")
            yield

    process = CrawlerProcess(install_root_handler=False)
    process.crawl(Broken)
    process.start()
    assert [type(f) for f in process.failures] == [CrawlFailed]
    with pytest.raises(ValueError, match="ends with its crawls"):
        process.start(stop_after_crawl=False)
