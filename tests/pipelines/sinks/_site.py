"""The generated site and the spider that crawls it.

The site is a binary tree of ``PAGES`` pages; each page yields a ``Page`` item (its key
declared: ``n``) and a plain dict (no key: its identity is its task and place), so every
crawl of it should write exactly ``2 * PAGES`` rows or messages.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from aiohttp import web

from skitter import Request, Spider

PAGES = 60


@dataclass
class Page:
    n: int = field(metadata={"key": True})
    url: str = ""
    title: str | None = None
    tags: list[str] = field(default_factory=list)


class Tree(Spider):
    name = "tree"

    def start_requests(self) -> Any:
        yield Request(self.settings["BASE"] + "/p/0")

    def parse(self, response: Any) -> Any:
        n = int(response.url.rsplit("/", 1)[1])
        yield Page(n=n, url=response.url, title=f"page {n}", tags=["a", str(n)])
        yield {"page": n, "note": "plain"}
        for m in (2 * n + 1, 2 * n + 2):
            if m < PAGES:
                yield response.follow(f"/p/{m}")


def tree_site() -> web.Application:
    async def page(request: web.Request) -> web.Response:
        return web.Response(text="<html>ok</html>", content_type="text/html")

    app = web.Application()
    app.router.add_get("/p/{n}", page)
    return app
