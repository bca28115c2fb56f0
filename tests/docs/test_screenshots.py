"""The dashboard page's screenshots are the ones the browser tests take, so a change to
the page shows in the documentation the next time they are regenerated
(``SKITTER_DOCS_SCREENSHOTS=1``), never as a picture made by hand."""

from __future__ import annotations

import re
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
PAGE = ROOT / "docs" / "topics" / "dashboard.md"
IMAGES = ROOT / "docs" / "topics" / "img"


def test_every_screenshot_of_the_dashboard_page_is_one_a_browser_test_takes() -> None:
    shown = set(re.findall(r"\(img/dashboard-([a-z-]+)\.png\)", PAGE.read_text("utf-8")))
    assert len(shown) >= 3
    tests = ROOT / "tests" / "dashboard"
    conftest = (tests / "conftest.py").read_text("utf-8")
    docs_shots = re.search(r"DOCS_SHOTS = frozenset\(\{(.*?)\}\)", conftest)
    assert docs_shots is not None
    assert shown == set(re.findall(r'"([a-z-]+)"', docs_shots.group(1)))
    sources = "".join(p.read_text("utf-8") for p in tests.glob("test_*.py"))
    for name in shown:
        assert f'screenshot(page, "{name}")' in sources, name
        assert (IMAGES / f"dashboard-{name}.png").read_bytes().startswith(b"\x89PNG"), name
