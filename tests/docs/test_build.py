"""The documentation builds strictly: any warning (a broken link, a missing page, an
unknown name for autodoc, a reference page whose registry changed shape) fails the build,
and this test shows the generator's own messages. It builds with ``skitter docs``, the
command a reader uses to read the pages offline."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

pytestmark = pytest.mark.subprocess

DOCS = Path(__file__).resolve().parents[2] / "docs"


def _build(source: Path, out: Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [
            sys.executable,
            "-m",
            "sphinx",
            "-W",
            "--keep-going",
            "-q",
            "-b",
            "html",
            "-d",
            str(out / ".doctrees"),
            str(source),
            str(out / "html"),
        ],
        capture_output=True,
        text=True,
        check=False,
    )


def test_the_documentation_builds_with_warnings_as_errors(tmp_path: Path) -> None:
    html = tmp_path / "html"
    done = subprocess.run(
        [sys.executable, "-m", "skitter", "docs", "--out", str(html)],
        capture_output=True,
        text=True,
        check=False,
    )
    assert done.returncode == 0, done.stderr + done.stdout
    assert done.stdout.strip() == f"The documentation: {(html / 'index.html').as_uri()}"
    for page in ("index", "tutorial", "reference/settings", "reference/cli", "reference/stats"):
        assert (html / f"{page}.html").is_file(), page
    _reference_is_complete(html)


def _reference_is_complete(html: Path) -> None:
    """Every setting and command of the code has its row or section in the reference."""
    from skitter.settings import SETTINGS

    settings = (html / "reference/settings.html").read_text(encoding="utf-8")
    missing = [name for name in SETTINGS if f'id="setting-{name.lower()}"' not in settings]
    assert not missing
    # the Scrapy column: a renamed equivalent, a kept name, none
    row = settings.split('id="setting-redis_persist"', 1)[1].split("</tr>", 1)[0]
    assert 'SCHEDULER_PERSIST</span> <span class="pre">(scrapy-redis)' in row
    row = settings.split('id="setting-download_delay"', 1)[1].split("</tr>", 1)[0]
    assert row.count("DOWNLOAD_DELAY") == 2  # its own name, and Scrapy's
    row = settings.split('id="setting-retry_delays"', 1)[1].split("</tr>", 1)[0]
    assert "\u2014" in row
    api = (html / "reference/http-api.html").read_text(encoding="utf-8")
    for operation in ("get-api-overview", "post-api-projects-name-rate", "get-metrics"):
        assert f'id="dashboard-{operation}"' in api, operation
    server = (html / "reference/server-api.html").read_text(encoding="utf-8")
    for operation in ("post-schedule-json", "get-listjobs-json", "get-runs-job"):
        assert f'id="server-{operation}"' in server, operation
    cli = (html / "reference/cli.html").read_text(encoding="utf-8")
    for command in ("crawl", "worker", "practice", "docs", "startproject"):
        assert f'id="cli-skitter-{command}"' in cli, command
    _generated_pages_are_complete(html)


def _generated_pages_are_complete(html: Path) -> None:
    """The public API, the exceptions and the signals: every name exported has its entry
    (a name added to an ``__all__`` without a docstring, or renamed, shows here)."""
    import skitter
    import skitter.exceptions
    import skitter.signals

    pages = {
        "api": ("skitter.", [n for n in skitter.__all__ if n != "__version__"]),
        "exceptions": ("skitter.exceptions.", skitter.exceptions.__all__),
        "signals": ("signal-", [n for n in skitter.signals.__all__ if n != "SignalManager"]),
    }
    for page, (prefix, names) in pages.items():
        text = (html / f"reference/{page}.html").read_text(encoding="utf-8")
        missing = [name for name in names if f'id="{prefix}{name}"' not in text]
        assert not missing, f"reference/{page}: {missing}"
    meta = (html / "reference/meta.html").read_text(encoding="utf-8")
    assert all(key in meta for key in ("dont_retry", "proxy", "transport", "session_id"))
    assert "this request is never retried" in meta  # each key with its meaning
    stats = (html / "reference/stats.html").read_text(encoding="utf-8")
    assert all(key in stats for key in ("item_scraped_count", "retry/count"))
    assert "Items that passed every pipeline" in stats  # each key with what it counts


def test_a_broken_link_fails_the_build(tmp_path: Path) -> None:
    """The strictness the first test relies on: a page linking nowhere is an error."""
    source = tmp_path / "src"
    source.mkdir()
    (source / "conf.py").write_text(
        'extensions = ["myst_parser"]\nsource_suffix = {".md": "markdown"}\n', encoding="utf-8"
    )
    (source / "index.md").write_text("# Home\n\nSee [nowhere](missing.md).\n", encoding="utf-8")
    done = _build(source, tmp_path / "out")
    assert done.returncode != 0
    assert "missing.md" in done.stderr
