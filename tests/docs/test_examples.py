"""Every example of the documentation runs against the practice site, or says why not.

The tutorial and getting-started pages are run step by step (``test_tutorial.py``). Every
other page's ``python`` blocks run as their comment says (``_examples``): a spider crawls
the practice site and must yield what the page shows, a callback fragment runs on a
practice page, a settings block is resolved as a crawl resolves it, a pipeline or an
extension runs in a crawl. A page's ``console`` blocks run as the tutorial's do, with
the page's file blocks written first and the practice site already up. Blocks that need
what this machine lacks (S3, a real proxy, other hosts) say so with ``skip: reason``, and
are still compiled, top-level ``await`` allowed and a callback fragment as the body of one.
"""

from __future__ import annotations

import ast
import os
import re
import sys
from collections import Counter
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import pytest

from skitter import Spider
from skitter.demo import make_app
from skitter.downloader.browser import browser_problem
from skitter.testing import serve_app
from skitter.testing._practice import serve_practice_site
from skitter.testing._redis import require_redis_server

from ._examples import (
    FAST,
    Example,
    callback_spider,
    crawl,
    defined,
    examples,
    execute,
    resolve_settings,
    shop_spider,
)
from ._pages import Command, FileWrite, blocks, steps
from ._reader import Reader, free_port

DOCS = Path(__file__).resolve().parents[2] / "docs"
PAGES = sorted(p for p in DOCS.rglob("*.md") if "_build" not in p.parts)
#: Pages run as a whole, step by step, by test_tutorial.py.
RUN_PAGES = {DOCS / "tutorial.md", DOCS / "getting-started.md"}
READ_PAGES = [page for page in PAGES if page not in RUN_PAGES]
CODE = frozenset({"python", "sh"})
#: How a console page's site is started, when the page does not start it itself.
SERVERS = {
    "practice": "{python} -m skitter practice --port {port}",
    "demo": "{python} -c 'from aiohttp import web; from skitter.demo import make_app; "
    'web.run_app(make_app(), host="127.0.0.1", port={port})\'',
}


def _all() -> list[Example]:
    return [found for page in READ_PAGES for found in examples(page, DOCS, CODE)]


def _python_blocks() -> list[tuple[str, int, str]]:
    return [
        (str(page.relative_to(DOCS)), block.line, block.text)
        for page in PAGES
        for block in blocks(page)
        if block.language == "python"
    ]


def test_the_documentation_has_python_examples() -> None:
    assert len(_python_blocks()) >= 25


@pytest.mark.parametrize(
    ("page", "line", "code"), _python_blocks(), ids=[f"{p}:{n}" for p, n, _ in _python_blocks()]
)
def test_every_python_example_compiles(page: str, line: int, code: str) -> None:
    try:
        _compile(code, f"{page}:{line}")
    except SyntaxError as exc:
        pytest.fail(f"docs/{page}, block at line {line}: {exc}")


def _compile(code: str, name: str) -> None:
    try:
        compile(code, name, "exec", flags=ast.PyCF_ALLOW_TOP_LEVEL_AWAIT)
    except SyntaxError as exc:
        if "outside function" not in str(exc):
            raise
        body = "".join(f"    {line}\n" for line in code.splitlines())
        compile(f"async def callback(self, response):\n{body}", name, "exec")


def test_every_example_says_how_it_runs() -> None:
    """A new example needs a decision: run it (and how), or say why it cannot run here."""
    unsaid = [example.where for example in _all() if not example.kind]
    assert not unsaid, "no <!-- example: ... --> comment above: " + ", ".join(unsaid)
    reasonless = [e.where for e in _all() if e.kind == "skip" and len(e.reason) < 10]
    assert not reasonless, "a skipped example says why: " + ", ".join(reasonless)
    shell = [e.where for e in _all() if e.block.language == "sh" and e.kind != "skip"]
    assert not shell, "a shell block that can run is a console block, with its output"


def test_most_examples_run() -> None:
    """The count the documentation's note gives; skipping is the exception."""
    counts = Counter(
        ("skip" if e.kind == "skip" else "run") + "/" + e.block.language for e in _all()
    )
    consoles = sum(1 for p in READ_PAGES for b in blocks(p) if b.language == "console")
    print(dict(counts), "console blocks run:", consoles)  # pytest -s shows it
    assert counts["run/python"] >= 25
    assert counts["skip/python"] <= 8


@pytest.fixture
async def sites() -> AsyncIterator[dict[str, str]]:
    """The two local sites an example may crawl: the demo shop (``skitter demo``) and the
    practice site (``skitter practice``), by name, as base URLs."""
    async with serve_app(make_app()) as demo, serve_practice_site() as practice:
        yield {"demo": demo, "practice": practice}


def _site(example: Example, sites: dict[str, str]) -> str:
    return sites[example.options.get("site", "demo")]


def _pages_with(*kinds: str) -> list[Path]:
    return [p for p in READ_PAGES if any(e.kind in kinds for e in examples(p, DOCS, CODE))]


def _name(page: Path) -> str:
    return str(page.relative_to(DOCS))


def _renders(page: Path) -> bool:
    """Whether an example of ``page`` renders in a browser (``needs=browser``)."""
    return any(e.options.get("needs") == "browser" for e in examples(page, DOCS, CODE))


RUN_KINDS = ("run", "spider", "callback")


@pytest.mark.parametrize("page", [p for p in _pages_with(*RUN_KINDS) if not _renders(p)], ids=_name)
async def test_the_page_examples_run(
    page: Path, sites: dict[str, str], tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    await _run_page(page, sites, tmp_path, monkeypatch)


@pytest.mark.parametrize("page", [p for p in _pages_with(*RUN_KINDS) if _renders(p)], ids=_name)
async def test_the_page_rendering_examples_run(
    page: Path, sites: dict[str, str], tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The same, in Chromium: skipped loudly without it or Playwright, failed under CI."""
    problem = browser_problem()
    if problem is not None:
        message = f"docs/{_name(page)} renders in a browser: {problem}"
        if os.environ.get("CI", "").lower() == "true":
            pytest.fail(message)
        pytest.skip(message)
    await _run_page(page, sites, tmp_path, monkeypatch)


async def _run_page(
    page: Path, sites: dict[str, str], tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(tmp_path)
    monkeypatch.syspath_prepend(str(tmp_path))
    found = examples(page, DOCS, frozenset({"python"}))
    uses = {DOCS / e.options["uses"] for e in found if "uses" in e.options}
    for source in [page, *uses]:  # the named files (``# shop.py``), to import
        for step in steps(source):
            if isinstance(step, FileWrite):
                text = step.text.replace("http://127.0.0.1:8000", sites["demo"])
                (tmp_path / step.path).parent.mkdir(parents=True, exist_ok=True)
                (tmp_path / step.path).write_text(text, encoding="utf-8")
    namespace: dict[str, Any] = {"__name__": "docs_example"}
    for example in found:
        site = _site(example, sites)
        code = example.block.text.replace("http://127.0.0.1:8000", site)
        await _run(example, code, namespace, site)


async def _run(example: Example, code: str, namespace: dict[str, Any], site: str) -> None:
    if example.kind in ("skip", "settings", "component"):
        return
    if example.kind == "callback":
        url = site + example.options.get("url", "/")
        items, stats = await crawl(callback_spider(code, url), {})
        assert items, f"{example.where}: the callback ran into an error: {stats}"
        empty = [name for name, value in items[0]["locals"].items() if not value]
        assert not empty, f"{example.where}: nothing found for {empty} on {url}"
        return
    before = set(namespace)
    await execute(code, namespace, example.where)
    if example.kind == "spider":
        for spidercls in defined(namespace, before, Spider):
            if "url" in example.options:  # a spider fed by other means (a push, @every)
                spidercls.start_urls = [site + example.options["url"]]
            await _crawl_spider(example, spidercls)
    if "call" in example.options:
        await namespace[example.options["call"]]()


async def _crawl_spider(example: Example, spidercls: type[Spider]) -> None:
    pages = int(example.options.get("pages", "10"))
    # for the rest of the page too: a later block crawls it again, as briefly
    spidercls.custom_settings = {**(spidercls.custom_settings or {}), **FAST}
    spidercls.custom_settings["CLOSESPIDER_PAGECOUNT"] = pages
    items, stats = await crawl(spidercls, {})
    assert items, f"{example.where}: {spidercls.__name__} scraped nothing: {stats}"
    for name in example.options.get("fields", "").split(","):
        if name:
            missing = [item for item in items if item.get(name) in (None, "")]
            assert not missing, f"{example.where}: items without {name!r}: {missing[:3]}"


@pytest.mark.parametrize("page", _pages_with("settings"), ids=_name)
async def test_the_page_settings_resolve(page: Path) -> None:
    for example in examples(page, DOCS, frozenset({"python"})):
        if example.kind != "settings":
            continue
        namespace: dict[str, Any] = {"__name__": "docs_example"}
        await execute(example.block.text, namespace, example.where)
        values = {k: v for k, v in namespace.items() if k.isupper()}
        values.update(namespace.get("custom_settings", {}))
        for spidercls in defined(namespace, set(), Spider):
            values.update(spidercls.custom_settings or {})
        assert values, f"{example.where}: no setting in it"
        declared = example.options.get("declared", "").split(",")
        resolve_settings(values, [name for name in declared if name])


@pytest.mark.parametrize("page", _pages_with("component"), ids=_name)
async def test_the_page_components_run_in_a_crawl(page: Path, sites: dict[str, str]) -> None:
    namespace: dict[str, Any] = {"__name__": "docs_example"}
    for example in examples(page, DOCS, frozenset({"python"})):
        if example.kind != "component":
            continue
        before = set(namespace)
        await execute(example.block.text, namespace, example.where)
        classes = defined(namespace, before, object)
        setting = example.options["setting"]
        value: Any = classes[-1] if setting == "LOG_FORMATTER" else dict.fromkeys(classes, 500)
        items, stats = await crawl(shop_spider(sites["demo"]), {setting: value})
        errors = stats.get("log_count/ERROR", 0)
        assert items or setting == "ITEM_PIPELINES", f"{example.where}: no item: {stats}"
        assert not errors, f"{example.where}: {errors} errors in the crawl: {stats}"


def _console_pages() -> list[Path]:
    return [p for p in READ_PAGES if any(b.language == "console" for b in blocks(p))]


def _serves_the_site(step: Command | FileWrite) -> bool:
    """Whether ``step`` is a page starting the site on port 8000 itself."""
    return (
        isinstance(step, Command)
        and step.background
        and re.search(r"(:|port |port=)8000\b", step.command) is not None
    )


def _starts_redis(step: Command | FileWrite) -> bool:
    return isinstance(step, Command) and step.command.startswith("redis-server ")


# The distributed page runs three whole crawls of the demo shop and starts six
# processes: a minute and a half on an idle machine; the hang guard is sized for more.
@pytest.mark.subprocess
@pytest.mark.network
@pytest.mark.timeout(600)
@pytest.mark.parametrize("page", _console_pages(), ids=_name)
def test_the_page_commands_print_what_it_shows(page: Path, tmp_path: Path) -> None:
    """The site (``site=``, the practice site by default; ``none`` for a page that needs
    none) is up unless the page starts it; the files of the pages a block ``uses=`` are
    written first. A page that starts ``redis-server`` starts it on a free port too
    (skipped loudly, or failed under CI, without one installed)."""
    page_steps = steps(page)
    if any(_starts_redis(step) for step in page_steps):
        require_redis_server()
    reader = Reader(page, tmp_path, free_port())
    options: dict[str, str] = {}
    for example in examples(page, DOCS, frozenset({"console"})):
        options.update(example.options)
    try:
        for step in steps(DOCS / options["uses"]) if "uses" in options else []:
            if isinstance(step, FileWrite):
                reader.write(step)
        needs_site = options.get("site") != "none"
        if needs_site and not any(_serves_the_site(step) for step in page_steps):
            server = SERVERS[options.get("site", "practice")]
            reader.start(server.format(python=sys.executable, port=8000), ["..."])
        reader.play(page_steps)
    finally:
        reader.stop()
