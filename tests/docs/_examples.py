"""Running the Python examples of the pages that are read, not followed step by step.

The tutorial and getting-started pages are run as a reader would (``test_tutorial.py``).
On every other page, each ``python`` block says how it runs in the HTML comment on the
line above its fence, ``<!-- example: KIND options -->``, invisible in the built page:

- ``run``: executed (top-level ``await`` allowed) in the page's namespace, which the
  page's earlier blocks filled, as a reader pasting them in order would.
- ``spider pages=N fields=a,b``: executed, then each spider class it defines crawls the
  practice site for at most N responses; it must yield items with those fields set.
- ``callback url=/path``: a fragment of a callback, run as the body of one on that page
  of the practice site; each name it assigns must hold something (a selector matching
  nothing is an example that lies).
- ``component setting=NAME``: the classes it defines are enabled in that setting
  (``ITEM_PIPELINES``, ``EXTENSIONS``, ``SPIDER_MIDDLEWARES``, ``LOG_FORMATTER``...) for a
  crawl of the practice site that must end without an error.
- ``settings declared=A,B``: a settings module (or a ``custom_settings``): resolved as a
  crawl resolves it; every name must be skitter's or one of ``declared``.
- ``needs=browser``, with any kind that runs: it renders in Chromium; its page runs in a
  test of its own, skipped loudly without Chromium and Playwright (failed under CI).
- ``skip: reason``: not run here (an S3 bucket, a proxy, other hosts); only compiled.

Shell blocks (``sh``) carry the same comment (``skip: reason``, or ``run`` when they are
written as ``console`` blocks with their output, which ``test_examples`` runs).
Everywhere, ``127.0.0.1:8000`` is the demo shop (``skitter demo``), or the practice site
(``skitter practice``) for a block with ``site=practice``, on whatever port it really has.
"""

from __future__ import annotations

import ast
import asyncio
import inspect
import re
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from skitter import Crawler, Spider
from skitter.settings import Settings
from skitter.settings._declared import check_declared

from ._pages import Block, blocks

__all__ = ["KINDS", "Example", "crawl", "examples", "execute", "resolve_settings", "shop_spider"]

KINDS = frozenset({"run", "spider", "callback", "component", "settings", "skip"})
_MARKER = re.compile(r"^<!--\s*example:\s*(\w+)(:?)\s*(.*?)\s*-->\s*$")
#: Fast crawls of a local site: no delay, no robots.txt round trip, few log lines.
FAST = {"DOWNLOAD_DELAY": 0.0, "ROBOTSTXT_OBEY": False, "LOG_LEVEL": "WARNING"}


@dataclass(frozen=True)
class Example:
    """A code block of a page and how its comment says it runs."""

    page: str
    block: Block
    kind: str
    options: dict[str, str] = field(default_factory=dict)
    reason: str = ""

    @property
    def where(self) -> str:
        return f"docs/{self.page}, block at line {self.block.line}"


def _marker(lines: list[str], block: Block, page: str) -> tuple[str, dict[str, str], str]:
    above = lines[block.line - 2] if block.line >= 2 else ""
    found = _MARKER.match(above.strip())
    if found is None:
        return "", {}, ""
    kind, colon, rest = found.groups()
    if kind not in KINDS:
        raise ValueError(f"docs/{page}:{block.line - 1}: unknown example kind {kind!r}")
    if kind == "skip":
        return kind, {}, rest
    if colon:
        raise ValueError(f"docs/{page}:{block.line - 1}: only 'skip:' takes a reason")
    options = dict(item.split("=", 1) for item in rest.split())
    return kind, options, ""


def examples(page: Path, docs: Path, languages: frozenset[str]) -> list[Example]:
    """The page's blocks in ``languages``, each with what its comment says ("" if none)."""
    lines = page.read_text(encoding="utf-8").splitlines()
    name = str(page.relative_to(docs))
    found = []
    for block in blocks(page):
        if block.language in languages:
            kind, options, reason = _marker(lines, block, name)
            found.append(Example(name, block, kind, options, reason))
    return found


async def execute(code: str, namespace: dict[str, Any], name: str) -> None:
    """Run ``code`` as a module body in ``namespace``, awaiting a top-level ``await``.

    Code without one runs in a thread, as in a script: an example may call the
    synchronous ``crawl()``, which runs its own event loop."""
    try:
        plain = compile(code, name, "exec")
    except SyntaxError:
        compiled = compile(code, name, "exec", flags=ast.PyCF_ALLOW_TOP_LEVEL_AWAIT)
        result = eval(compiled, namespace)
        if inspect.isawaitable(result):
            await result
        return
    await asyncio.to_thread(exec, plain, namespace)


def defined(namespace: dict[str, Any], before: set[str], base: type) -> list[type]:
    """The subclasses of ``base`` that the last block added to ``namespace``."""
    return [
        value
        for key, value in namespace.items()
        if key not in before
        and isinstance(value, type)
        and issubclass(value, base)
        and value.__module__ == namespace.get("__name__")  # defined, not imported
    ]


async def crawl(
    spidercls: type[Spider], settings: dict[str, Any]
) -> tuple[list[Any], dict[str, Any]]:
    """Crawl to the end; the items scraped, in order, and the stats."""
    items: list[Any] = []

    class Collect:
        def process_item(self, item: Any, spider: Spider) -> Any:
            items.append(item)
            return item

    pipelines = {Collect: 1000, **settings.get("ITEM_PIPELINES", {})}
    stats = await Crawler(spidercls, {**FAST, **settings, "ITEM_PIPELINES": pipelines}).run()
    return items, dict(stats)


def shop_spider(base_url: str) -> type[Spider]:
    """A spider of the demo shop yielding its products as the pages show them (the
    price as printed: ``"12,50 €"``), for examples that process items."""

    class Shop(Spider):
        name = "shop"
        start_urls = [f"{base_url}/category/tea"]

        def parse(self, response: Any) -> Any:
            yield from response.follow_all(css="article.product a.title", callback=self.item)

        def item(self, response: Any) -> Any:
            yield {
                "name": response.css("h1.name::text").get(),
                "price": response.css(".price span::text").get(),
                "url": response.url,
            }

    return Shop


def callback_spider(code: str, url: str) -> type[Spider]:
    """A spider whose one callback is the fragment ``code``; it yields the callback's
    local names at the end, so the test can check what the fragment found."""
    body = "".join(f"        {line}\n" for line in code.splitlines())
    source = (
        "class Fragment(Spider):\n"
        "    name = 'fragment'\n"
        f"    start_urls = [{url!r}]\n"
        "    async def parse(self, response):\n"
        f"{body}"
        "        yield {'locals': {k: v for k, v in locals().items() "
        "if k not in ('self', 'response')}}\n"
    )
    namespace: dict[str, Any] = {"Spider": Spider}
    exec(compile(source, url, "exec"), namespace)
    spidercls: type[Spider] = namespace["Fragment"]
    return spidercls


def resolve_settings(values: dict[str, Any], declared: list[str]) -> Settings:
    """Resolve ``values`` as a project's settings, refused as a crawl refuses them."""
    settings = Settings.resolve(values)

    class Declares:
        declared_settings = tuple(declared)

    check_declared(settings, [Declares])
    return settings
