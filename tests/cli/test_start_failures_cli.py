"""``skitter crawl`` of a spider none of whose start requests got a response it
accepted: exit 1, and with ``-L WARNING`` a WARNING naming each start request and its
cause (issue 27, item 12); ``-s FAIL_WHEN_NO_START_SUCCEEDS=False`` keeps the warning
and exits 0. A real subprocess, a closed port and a 404 on 127.0.0.1."""

from __future__ import annotations

import socket
import textwrap
from pathlib import Path
from typing import Any

from aiohttp import web

from .conftest import Cli

SPIDER = """
from skitter import Spider


class Gone(Spider):
    name = "gone"
    start_urls = {urls!r}

    def parse(self, response):
        yield {{"url": response.url}}
"""


async def test_a_crawl_whose_starts_all_failed_exits_1_and_says_why(
    cli: Cli, serve: Any, tmp_path: Path
) -> None:
    async def gone(request: web.Request) -> web.Response:
        return web.Response(status=404, text="gone")

    app = web.Application()
    app.router.add_get("/gone", gone)
    missing = f"{await serve(app)}/gone"
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        refused = f"http://127.0.0.1:{sock.getsockname()[1]}/"
    spider = tmp_path / "gone.py"
    spider.write_text(textwrap.dedent(SPIDER.format(urls=[refused, missing])))
    args = ("crawl", str(spider), "-L", "WARNING", "-s", "RETRY_TIMES=0")
    run = await cli(*args)
    assert run.code == 1, run.err
    assert "not one of its start requests got a response it accepted (2 failed)" in run.err
    assert f"{refused}: ConnectError: cannot connect: Connection refused" in run.err
    assert f"{missing}: HTTP 404: a status the spider does not handle" in run.err
    lenient = await cli(*args, "-s", "FAIL_WHEN_NO_START_SUCCEEDS=False")
    assert lenient.code == 0, lenient.err
    assert f"{missing}: HTTP 404" in lenient.err
