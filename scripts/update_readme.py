"""Regenerate the settings table in README.md from the settings registry.

Run after adding or changing a setting: ``.venv/bin/python scripts/update_readme.py``.
tests/test_readme.py fails when the table is stale.
"""

from __future__ import annotations

import json
import re
import sys
from pathlib import Path

from skitter.settings import SETTINGS

README = Path(__file__).resolve().parent.parent / "README.md"
BLOCK = re.compile(r"(<!-- settings-table:[^\n]*-->\n)(.*?)(<!-- /settings-table -->)", re.S)


def _default(value: object) -> str:
    if isinstance(value, bool):
        return str(value)
    if isinstance(value, int) and value >= 1024 * 1024 and value % (1024 * 1024) == 0:
        return f"{value // (1024 * 1024)} MiB"
    if isinstance(value, int) and value >= 1024 and value % 1024 == 0:
        return f"{value // 1024} KiB"
    if isinstance(value, dict | list):
        text = json.dumps(value)
        return text if len(text) <= 40 else "see source"
    return repr(value) if isinstance(value, str) else str(value)


def table() -> str:
    rows = ["| setting | default | meaning |", "|---|---|---|"]
    for spec in SETTINGS.values():
        doc = spec.doc.replace("|", "\\|")
        rows.append(f"| `{spec.name}` | `{_default(spec.default)}` | {doc} |")
    return "\n".join(rows) + "\n"


def render(text: str) -> str:
    return BLOCK.sub(lambda m: m.group(1) + table() + m.group(3), text)


if __name__ == "__main__":
    current = README.read_text(encoding="utf-8")
    README.write_text(render(current), encoding="utf-8")
    sys.exit(0)
