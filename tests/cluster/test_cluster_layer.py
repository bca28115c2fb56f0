"""Where the cluster package sits (docs/architecture.md): beside the engine, below the crawler. It
imports neither the engine nor anything above it (not even for types: no cycle such as
crawler -> cluster -> crawler), the engine does not import it, and a crawl that keeps
its state elsewhere never loads it, nor redis-py."""

from __future__ import annotations

import ast
import subprocess
import sys
from pathlib import Path

SRC = Path(__file__).resolve().parents[2] / "src"
PACKAGE = SRC / "skitter"


def imported(path: Path) -> set[str]:
    """Every module ``path`` imports, TYPE_CHECKING blocks and function bodies included."""
    names: set[str] = set()
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.Import):
            names.update(alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
            names.add(node.module)
    return names


def _under(names: set[str], *packages: str) -> set[str]:
    return {n for n in names if any(n == p or n.startswith(p + ".") for p in packages)}


def test_the_cluster_imports_nothing_of_the_engine_or_above() -> None:
    above = ("skitter.engine", "skitter.crawler", "skitter.cli", "skitter.dashboard")
    for path in sorted((PACKAGE / "cluster").glob("*.py")):
        assert not _under(imported(path), *above), path.name


def test_the_engine_and_the_layers_below_do_not_import_the_cluster() -> None:
    for package in ("engine", "scheduler", "frontier", "downloader", "spider", "pipelines"):
        for path in sorted((PACKAGE / package).rglob("*.py")):
            assert not _under(imported(path), "skitter.cluster"), path


def test_a_crawl_without_redis_never_loads_it() -> None:
    code = (
        "import sys, skitter, skitter.crawler, skitter.cli, skitter.dashboard\n"
        "loaded = sorted(m for m in sys.modules if m == 'redis' or m.startswith("
        "('redis.', 'skitter.cluster', 'skitter.redis', 'skitter.frontier._redis')))\n"
        "assert not loaded, loaded\n"
    )
    subprocess.run([sys.executable, "-c", code], check=True, env={"PYTHONPATH": str(SRC)})
