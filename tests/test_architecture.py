"""The shape of the code (docs/architecture.md), checked rather than hoped for.

The layer contract itself is import-linter's (``[tool.importlinter]`` in pyproject.toml,
run by ``.ci/run``); these tests hold what it does not: no cycle between any two modules,
whatever their layer (imports made only for type checking aside), and no module over
450 lines.
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
