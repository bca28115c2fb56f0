"""What ``pip install skitter`` brings: distributed crawling is core, not an extra."""

from __future__ import annotations

import re
import subprocess
import sys
import tomllib
import zipfile
from pathlib import Path

PYPROJECT = Path(__file__).resolve().parent.parent / "pyproject.toml"


def _names(requirements: list[str]) -> set[str]:
    return {re.split(r"[\[<>=!~; ]", requirement, maxsplit=1)[0] for requirement in requirements}


def test_redis_support_is_in_the_default_install() -> None:
    """``skitter worker``, ``push`` and ``dashboard --redis`` work after a plain
    ``pip install skitter``, with hiredis; ``skitter[redis]`` still resolves."""
    project = tomllib.loads(PYPROJECT.read_text())["project"]
    assert any(re.fullmatch(r"redis\[hiredis\]>=[\d.]+", r) for r in project["dependencies"])
    extras = project["optional-dependencies"]
    assert extras["redis"] == []
    assert "redis" not in _names(extras["test"])  # no second, diverging pin


def test_the_wheel_ships_py_typed(tmp_path: Path) -> None:
    """PEP 561: without ``skitter/py.typed`` in the wheel, users' type checkers ignore
    skitter's hints (it is checked with mypy strict). Built as pip builds it."""
    pip = [sys.executable, "-m", "pip", "wheel", "--no-deps", "--no-build-isolation", "-q"]
    built = subprocess.run(
        [*pip, "--wheel-dir", str(tmp_path), str(PYPROJECT.parent)],
        capture_output=True,
        text=True,
        check=False,
    )
    assert built.returncode == 0, built.stderr
    [wheel] = tmp_path.glob("skitter-*.whl")
    with zipfile.ZipFile(wheel) as archive:
        names = set(archive.namelist())
    assert "skitter/py.typed" in names
    assert "skitter/settings/_settings.py" in names  # the wheel holds the package itself
