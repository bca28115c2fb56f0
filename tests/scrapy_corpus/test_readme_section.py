"""The "Coming from Scrapy" page of the documentation says only what is there: its import
lines run, every ``skitter.…`` path it names resolves, every setting its table says is refused
is refused, and the corpus is as large as it says."""

from __future__ import annotations

import ast
import importlib
import re
from pathlib import Path
from typing import Any

import pytest

from skitter import ConfigError
from skitter.settings import Settings

ROOT = Path(__file__).resolve().parents[2]
SPIDERS = Path(__file__).parent / "spiders"


def _section() -> str:
    return (ROOT / "docs/coming-from/scrapy.md").read_text(encoding="utf-8")


def _resolve(path: str) -> Any:
    """``skitter.a.b.Name``: the longest importable module prefix, then attributes."""
    parts = path.split(".")
    for cut in range(len(parts), 0, -1):
        try:
            obj: Any = importlib.import_module(".".join(parts[:cut]))
        except ImportError:
            continue
        for attr in parts[cut:]:
            obj = getattr(obj, attr)
        return obj
    raise ImportError(path)


def test_the_section_s_import_lines_run() -> None:
    block = re.search(r"```python\n(.*?)```", _section(), re.S)
    assert block is not None
    exec(compile(block.group(1), "docs/coming-from/scrapy.md", "exec"), {})


def test_every_skitter_path_it_names_resolves() -> None:
    names = set(re.findall(r"`(skitter(?:\.\w+)+)`", _section()))
    paths = {name for name in names if name != "skitter.toml"}  # a file, not a module
    assert len(paths) >= 8
    for path in sorted(paths):
        assert _resolve(path) is not None, path


def _refused_rows() -> list[tuple[str, Any]]:
    rows = re.findall(r"^\| `([A-Z_]+) = (.+?)` \|", _section(), re.M)
    return [(name, ast.literal_eval(value)) for name, value in rows]


def test_the_table_lists_refused_settings() -> None:
    assert len(_refused_rows()) >= 5


@pytest.mark.parametrize(("name", "value"), _refused_rows())
def test_every_setting_the_table_lists_is_refused(name: str, value: Any) -> None:
    with pytest.raises(ConfigError, match=name):
        Settings.resolve(project={name: value})


def test_the_corpus_is_as_large_as_it_says() -> None:
    said = re.search(r"holds (\d+) spiders", _section())
    assert said is not None
    assert int(said.group(1)) == len(list(SPIDERS.glob("*.py")))
