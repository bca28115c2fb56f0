"""The tutorial and the getting-started page, run as a reader would: every command on the
page, every file it writes.

The page's commands run against the practice site the page itself starts (``_reader``).
"""

from __future__ import annotations

from pathlib import Path

import pytest

from ._pages import Command, FileWrite, steps
from ._reader import Reader, free_port

pytestmark = [pytest.mark.subprocess, pytest.mark.network]

DOCS = Path(__file__).resolve().parents[2] / "docs"
PAGE = DOCS / "tutorial.md"
RUN_PAGES = [PAGE, DOCS / "getting-started.md"]


# About fifteen skitter processes one after the other: a minute on an idle machine, more
# under the parallel suite; the hang guard is sized for that, as for the slow tier.
@pytest.mark.timeout(600)
@pytest.mark.parametrize("page", RUN_PAGES, ids=lambda page: page.name)
def test_the_page_runs_as_written(page: Path, tmp_path: Path) -> None:
    reader = Reader(page, tmp_path, free_port())
    try:
        reader.play(steps(page))
    finally:
        reader.stop()


def test_the_tutorial_runs_commands_and_writes_files() -> None:
    """A page whose blocks the reader skipped (a typo in a fence) would pass unrun."""
    found = steps(PAGE)
    assert sum(isinstance(s, Command) for s in found) >= 10
    assert sum(isinstance(s, FileWrite) for s in found) >= 3
