"""Reading the documentation's pages as steps a test can run.

A page is Markdown; its fenced code blocks are the examples. In a page that is run (the
tutorial), three kinds of block are steps, in the page's order:

- ``console``: ``$ command`` lines, each followed by the output it must print. In the
  output, ``...`` stands for any text within a line, and a line that is only ``...`` for
  any number of lines. A command ending in `` &`` runs in the background (a server); its
  output is what it prints first. ``cd DIR`` changes the directory of later commands.
- ``python`` whose first line is a comment naming a file (``# tutorial/items.py``): the
  file is written there, relative to the directory the page started in.
- any other block is text to read, not a step.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from pathlib import Path

__all__ = ["Block", "Command", "FileWrite", "blocks", "commands_of", "matches", "steps"]

_FENCE = re.compile(r"^(`{3,})([\w-]*)[^\n]*\n(.*?)^\1\s*$", re.S | re.M)
_FILE_COMMENT = re.compile(r"#\s*([\w./-]+\.(?:py|toml|cfg|txt))\s*$")


@dataclass(frozen=True)
class Block:
    """A fenced code block: its language, text and the page line it starts on."""

    language: str
    text: str
    line: int


@dataclass(frozen=True)
class Command:
    """A ``$ command`` of a console block and the output it must print."""

    command: str
    expected: list[str] = field(default_factory=list)
    line: int = 0

    @property
    def background(self) -> bool:
        return self.command.endswith(" &")


@dataclass(frozen=True)
class FileWrite:
    """A python block that names its file: written before the next step runs."""

    path: str
    text: str
    line: int


def blocks(page: Path) -> list[Block]:
    text = page.read_text(encoding="utf-8")
    return [
        Block(m.group(2), m.group(3), text.count("\n", 0, m.start()) + 1)
        for m in _FENCE.finditer(text)
    ]


def commands_of(block: Block) -> list[Command]:
    found: list[Command] = []
    for offset, line in enumerate(block.text.splitlines()):
        if line.startswith("$ "):
            found.append(Command(line[2:].strip(), [], block.line + 1 + offset))
        elif found:
            found[-1].expected.append(line)
        elif line.strip():
            raise ValueError(f"line {block.line + 1 + offset}: output before any '$ ' command")
    return found


def steps(page: Path) -> list[Command | FileWrite]:
    out: list[Command | FileWrite] = []
    for block in blocks(page):
        if block.language == "console":
            out.extend(commands_of(block))
        elif block.language == "python":
            first = block.text.splitlines()[0] if block.text else ""
            named = _FILE_COMMENT.match(first)
            if named:
                out.append(FileWrite(named.group(1), block.text, block.line))
    return out


def _pattern(expected: list[str]) -> re.Pattern[str]:
    parts = []
    for line in expected:
        if line.strip() == "...":
            parts.append(r"(?:[^\n]*\n)*?")
        else:
            pieces = (re.escape(piece) for piece in line.rstrip().split("..."))
            parts.append("[^\n]*".join(pieces) + r"[ \t]*\n")
    return re.compile("".join(parts))


def matches(expected: list[str], output: str) -> bool:
    """Whether ``output`` is what ``expected`` shows, ``...`` standing for any text."""
    lines = [line.rstrip() for line in output.splitlines()]
    normal = "".join(line + "\n" for line in lines)
    while expected and not expected[-1].strip():
        expected = expected[:-1]
    return _pattern(expected).fullmatch(normal) is not None
