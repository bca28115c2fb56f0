"""Users read the code's docstrings and the documentation, not the notes the project was
planned in: no page or source file may send them to a spec section, a design file or an
issue number they do not have."""

from __future__ import annotations

import re
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
CITATION = re.compile(r"\bSPEC\b|\bDESIGN(?:\.md)?\b|\b[Ii]ssue \d+")


def _sources() -> list[Path]:
    docs = [p for p in (ROOT / "docs").rglob("*.md") if "_build" not in p.parts]
    code = list((ROOT / "src/skitter").rglob("*.py"))
    return [ROOT / "README.md", ROOT / "CHANGELOG.md", *docs, *code]


def test_no_page_or_source_file_cites_internal_notes() -> None:
    found = [
        f"{path.relative_to(ROOT)}:{number}: {line.strip()}"
        for path in _sources()
        for number, line in enumerate(path.read_text(encoding="utf-8").splitlines(), 1)
        if CITATION.search(line)
    ]
    assert not found, "\n".join(found)
