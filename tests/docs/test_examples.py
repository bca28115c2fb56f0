"""Every Python example in the documentation is valid Python for the version it targets.

The tutorial's examples also run (test_tutorial.py); here, every other page's are
compiled, top-level ``await`` allowed (examples show ``await crawler.run()``), and a
fragment of a callback (a ``yield`` at the top) as the body of one, so a typo or an example
left half-edited fails the suite. ``pycon`` and ``console`` blocks are not
Python source and are skipped.
"""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

from ._pages import blocks

DOCS = Path(__file__).resolve().parents[2] / "docs"
PAGES = sorted(p for p in DOCS.rglob("*.md") if "_build" not in p.parts)


def _python_blocks() -> list[tuple[str, int, str]]:
    return [
        (str(page.relative_to(DOCS)), block.line, block.text)
        for page in PAGES
        for block in blocks(page)
        if block.language == "python"
    ]


def test_the_documentation_has_python_examples() -> None:
    assert len(_python_blocks()) >= 25


@pytest.mark.parametrize(
    ("page", "line", "code"), _python_blocks(), ids=[f"{p}:{n}" for p, n, _ in _python_blocks()]
)
def test_every_python_example_compiles(page: str, line: int, code: str) -> None:
    try:
        _compile(code, f"{page}:{line}")
    except SyntaxError as exc:
        pytest.fail(f"docs/{page}, block at line {line}: {exc}")


def _compile(code: str, name: str) -> None:
    try:
        compile(code, name, "exec", flags=ast.PyCF_ALLOW_TOP_LEVEL_AWAIT)
    except SyntaxError as exc:
        if "outside function" not in str(exc):
            raise
        body = "".join(f"    {line}\n" for line in code.splitlines())
        compile(f"async def callback(self, response):\n{body}", name, "exec")
