"""The README's promises: the two commands come first, the settings table is current."""

from __future__ import annotations

import importlib.util
import re
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent


def _load_updater():
    path = ROOT / "scripts/update_readme.py"
    spec = importlib.util.spec_from_file_location("update_readme", path)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_first_section_has_exactly_two_commands() -> None:
    text = (ROOT / "README.md").read_text(encoding="utf-8")
    first_block = re.search(r"```sh\n(.*?)```", text, re.S)
    assert first_block is not None
    lines = [line for line in first_block.group(1).splitlines() if line.strip()]
    assert len(lines) == 2
    assert lines[0].endswith("skitter demo")
    assert lines[1].endswith("pytest")
    ci = (ROOT / ".ci/run").read_text(encoding="utf-8")
    assert lines[1] in ci


def test_settings_table_is_current() -> None:
    text = (ROOT / "README.md").read_text(encoding="utf-8")
    assert _load_updater().render(text) == text, "run: python scripts/update_readme.py"
