"""The README's promises: the two commands come first, it stays a short front page, and
every page it links to exists."""

from __future__ import annotations

import re
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent


def _readme() -> str:
    return (ROOT / "README.md").read_text(encoding="utf-8")


def test_first_section_has_exactly_two_commands() -> None:
    first_block = re.search(r"```sh\n(.*?)```", _readme(), re.S)
    assert first_block is not None
    lines = [line for line in first_block.group(1).splitlines() if line.strip()]
    assert len(lines) == 2
    assert lines[0].endswith("skitter demo")
    assert lines[1].endswith("pytest")
    ci = (ROOT / ".ci/run").read_text(encoding="utf-8")
    assert lines[1] in ci


def test_the_readme_is_a_front_page_of_at_most_200_lines() -> None:
    assert len(_readme().splitlines()) <= 200


def test_every_file_the_readme_links_to_exists() -> None:
    targets = re.findall(r"\]\(((?!https?:|#)[^)#]+)", _readme())
    assert len(targets) >= 10
    missing = [target for target in targets if not (ROOT / target).exists()]
    assert not missing
