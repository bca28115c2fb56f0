"""What ``pip install skitter`` brings: distributed crawling is core, not an extra."""

from __future__ import annotations

import re
import tomllib
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
