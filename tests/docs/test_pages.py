"""How the tutorial's runner reads a page: commands, their output, files to write."""

from __future__ import annotations

from pathlib import Path

from ._pages import Command, FileWrite, matches, steps


def test_an_ellipsis_stands_for_text_within_a_line() -> None:
    assert matches(["... INFO: Stored (64 items)"], "2026-01-01 [feeds] INFO: Stored (64 items)\n")
    assert not matches(["... INFO: Stored (64 items)"], "INFO: Stored (63 items)\n")


def test_an_ellipsis_line_stands_for_any_number_of_lines() -> None:
    assert matches(["...", "last", "..."], "a\nb\nlast\nc\n")
    assert matches(["...", "last"], "last\n")
    assert not matches(["first", "last"], "first\nextra\nlast\n")


def test_output_must_match_whole() -> None:
    assert not matches(["one"], "one\ntwo\n")
    assert matches(["one   "], "one\n")  # trailing blanks are not compared


def test_a_page_becomes_commands_and_file_writes(tmp_path: Path) -> None:
    page = tmp_path / "page.md"
    page.write_text(
        "Text.\n\n```console\n$ echo hi\nhi\n$ cd sub\n```\n\n"
        "```python\n# pkg/mod.py\nX = 1\n```\n\n```python\nnot = 'a file'\n```\n",
        encoding="utf-8",
    )
    found = steps(page)
    assert found == [
        Command("echo hi", ["hi"], 4),
        Command("cd sub", [], 6),
        FileWrite("pkg/mod.py", "# pkg/mod.py\nX = 1\n", 9),
    ]
