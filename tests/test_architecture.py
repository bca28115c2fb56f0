"""The shape of the code (docs/architecture.md), checked rather than hoped for.

The layer contract itself is import-linter's (``[tool.importlinter]`` in pyproject.toml,
run by ``.ci/run``); these tests hold what it does not: no cycle between any two modules,
whatever their layer (imports made only for type checking aside), no module over 450
lines, and no package reaching into another's private modules.
"""

from __future__ import annotations

import re
from pathlib import Path

import grimp

import skitter


def _cycles(graph: grimp.ImportGraph) -> list[list[str]]:
    """The strongly connected groups of more than one module (Tarjan, iteratively)."""
    edges = {m: sorted(graph.find_modules_directly_imported_by(m)) for m in graph.modules}
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    groups: list[list[str]] = []
    for root in sorted(edges):
        if root in index:
            continue
        work = [(root, 0)]
        while work:
            node, i = work.pop()
            if i == 0:
                index[node] = low[node] = len(index)
                stack.append(node)
                on_stack.add(node)
            if i < len(edges[node]):
                work.append((node, i + 1))
                nxt = edges[node][i]
                if nxt not in index:
                    work.append((nxt, 0))
                elif nxt in on_stack:
                    low[node] = min(low[node], index[nxt])
                continue
            if low[node] == index[node]:
                group = []
                while True:
                    member = stack.pop()
                    on_stack.discard(member)
                    group.append(member)
                    if member == node:
                        break
                if len(group) > 1:
                    groups.append(sorted(group))
            if work:
                parent = work[-1][0]
                low[parent] = min(low[parent], low[node])
    return groups


def test_no_import_cycle_between_modules() -> None:
    graph = grimp.build_graph("skitter", exclude_type_checking_imports=True)
    assert _cycles(graph) == []


def test_the_cycle_finder_finds_a_cycle() -> None:
    graph = grimp.ImportGraph()
    for module in ("a", "a.x", "a.y", "a.z"):
        graph.add_module(module)
    graph.add_import(importer="a.x", imported="a.y")
    graph.add_import(importer="a.y", imported="a.z")
    graph.add_import(importer="a.z", imported="a.x")
    graph.add_import(importer="a", imported="a.x")
    assert _cycles(graph) == [["a.x", "a.y", "a.z"]]


MAX_MODULE_LINES = 450


def test_no_module_is_over_450_lines() -> None:
    src = Path(skitter.__file__).parent
    sizes = {
        str(path.relative_to(src)): len(path.read_text(encoding="utf-8").splitlines())
        for path in src.rglob("*.py")
    }
    assert len(sizes) > 50  # the walk found the package
    assert {name: n for name, n in sizes.items() if n > MAX_MODULE_LINES} == {}


#: A read of a setting by name, ``settings["NAME"]`` (any object named ...settings).
_RAW_READ = re.compile(r"settings\[\"")


def _raw_reads(text: str) -> int:
    return len(_RAW_READ.findall(text))


def test_library_code_reads_settings_through_typed_views() -> None:
    """Outside the settings package, a setting is read through its subsystem's typed view
    (``settings.view(EngineSettings).concurrent_requests``), never by name: a name read
    as ``Any`` hides a typo and the setting's type from mypy."""
    src = Path(skitter.__file__).parent
    reads = {
        str(path.relative_to(src)): n
        for path in src.rglob("*.py")
        if path.parent.name != "settings" or path.parent.parent != src
        if (n := _raw_reads(path.read_text(encoding="utf-8")))
    }
    assert reads == {}


def test_the_raw_read_finder_finds_one() -> None:
    assert _raw_reads('x = crawler.settings["DOWNLOAD_DELAY"] + self.settings["X"]') == 2
    assert _raw_reads("x = crawler.settings.view(EngineSettings).bot_name") == 0


def _private_reach(importer: str, imported: str) -> bool:
    """Whether ``importer`` reaches into a private module of another top-level package:
    a module below ``skitter.<package>`` with a name part that starts with ``_``
    (``skitter.http._codec``, ``skitter.frontier._redis._frontier``). Top-level private
    modules (``skitter._clock``) are the shared base, open to all."""
    theirs = imported.split(".")
    if theirs[0] != "skitter" or len(theirs) < 3:
        return False
    ours = importer.split(".")
    if len(ours) > 1 and ours[1] == theirs[1]:
        return False
    return any(part.startswith("_") for part in theirs[2:])


def _private_reaches(graph: grimp.ImportGraph) -> list[str]:
    return sorted(
        f"{importer} -> {imported}"
        for importer in graph.modules
        for imported in graph.find_modules_directly_imported_by(importer)
        if _private_reach(importer, imported)
    )


def test_no_package_imports_another_packages_private_modules() -> None:
    """A package offers others its public face (its ``__init__``, or a public module
    such as ``skitter.http.wiring`` or ``skitter.frontier.redis``); what starts with
    ``_`` may change without telling anyone outside the package. Imports made only for
    type checking count too: they break just the same when the module moves."""
    graph = grimp.build_graph("skitter", exclude_type_checking_imports=False)
    assert _private_reaches(graph) == []


def test_the_private_reach_finder_finds_one() -> None:
    assert _private_reach("skitter.cluster._job", "skitter.frontier._redis._keys")
    assert _private_reach("skitter.crawler", "skitter.settings._declared")
    assert not _private_reach("skitter.frontier._redis._frontier", "skitter.frontier._base")
    assert not _private_reach("skitter.cluster._job", "skitter.redis")
    assert not _private_reach("skitter.cluster._job", "skitter._clock")
    assert not _private_reach("skitter.cluster._job", "redis.asyncio")


#: A task started outside a task group: ``asyncio.create_task(``, ``loop.create_task(``,
#: ``asyncio.get_running_loop().create_task(``, ``asyncio.ensure_future(``. A task
#: group's own (``tg.create_task(``) is not one.
_BARE_TASK = re.compile(
    r"\b(?:asyncio\.create_task|loop\.create_task|get_running_loop\(\)\.create_task"
    r"|get_event_loop\(\)\.create_task|ensure_future)\("
)

#: Where a task is started outside a task group on purpose: ``_tasks.py`` is the one
#: place that does it for everyone (``Background``, ``TaskSet``); the others hand the
#: task itself to their caller, as Scrapy's API does (``CrawlerRunner.crawl``,
#: ``Crawler.crawl``, ``deferred_from_coro``), or await it in place and cancel it on a
#: second Ctrl-C (``skitter crawl``'s run).
_TASK_STARTERS = {
    "_tasks.py": 2,
    "_crawlapi.py": 1,
    "crawler.py": 1,
    "cli/_run.py": 1,
    "utils/defer.py": 1,
}


def _bare_tasks(text: str) -> int:
    return len(_BARE_TASK.findall(text))


def test_background_work_is_owned() -> None:
    """Every background loop is a ``Background`` of its service (started, stopped for
    sure, its health known) or a task of a ``TaskSet`` or a task group: a bare task is
    kept by nobody, stopped by nobody, and its error seen by nobody."""
    src = Path(skitter.__file__).parent
    bare = {
        path.relative_to(src).as_posix(): n
        for path in src.rglob("*.py")
        if (n := _bare_tasks(path.read_text(encoding="utf-8")))
    }
    assert bare == _TASK_STARTERS


def test_the_bare_task_finder_finds_them() -> None:
    text = (
        "asyncio.create_task(f())\nloop.create_task(f())\n"
        "asyncio.get_running_loop().create_task(f())\nasyncio.ensure_future(f())\n"
        "tg.create_task(f())\nself._tg.create_task(f())\n"
    )
    assert _bare_tasks(text) == 4
