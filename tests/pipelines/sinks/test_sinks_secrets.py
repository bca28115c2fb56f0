"""A sink's password is never printed or stored: not in the log (at DEBUG), the
statistics, ``skitter settings``, nor the message of a sink that cannot start."""

from __future__ import annotations

import asyncio
import json
import os
import sys
from pathlib import Path
from typing import Any

import pytest

from skitter.testing._redis import _free_port

from ._site import PAGES, tree_site

pytestmark = pytest.mark.slow
SRC = str(Path(__file__).resolve().parents[3] / "src")
PASSWORD = "Sink-Pa55-5e7b"


async def run(*args: str) -> tuple[int, str]:
    proc = await asyncio.create_subprocess_exec(
        sys.executable, "-m", "skitter", *args, env={**os.environ, "PYTHONPATH": SRC},
        stdout=asyncio.subprocess.PIPE, stderr=asyncio.subprocess.STDOUT,
    )  # fmt: skip
    out, _ = await asyncio.wait_for(proc.communicate(), timeout=90)
    assert proc.returncode is not None
    return proc.returncode, out.decode()


def spider_file(tmp_path: Path) -> Path:
    """The generated site's spider (``Tree``), as a file ``skitter crawl`` runs."""
    path = tmp_path / "tree.py"
    path.write_text(Path(__file__).with_name("_site.py").read_text())
    return path


async def test_a_sinks_password_is_shown_nowhere(serve: Any, pg_uri: str, tmp_path: Path) -> None:
    base = await serve(tree_site())
    uri = pg_uri.replace("postgres@", f"postgres:{PASSWORD}@")  # trust: any password
    sinks = json.dumps({f"{uri}?table=items": {"create": True}})
    code, out = await run(
        "crawl", str(spider_file(tmp_path)), "-s", f"BASE={base}", "-s", f"SINKS={sinks}",
        "-L", "DEBUG", "--stats-json", str(tmp_path / "stats.json"), "--no-progress",
    )  # fmt: skip
    assert code == 0, out
    assert "postgres:***@" in out
    stats = (tmp_path / "stats.json").read_text()
    assert f'"sink/postgresql:items/written": {2 * PAGES}' in stats
    code, shown = await run("settings", "--get", "SINKS", "-s", f"SINKS={sinks}")
    assert code == 0 and "postgres:***@" in shown
    closed = f"postgresql://postgres:{PASSWORD}@127.0.0.1:{_free_port()}/db?table=t"
    code, failed = await run(
        "crawl", str(spider_file(tmp_path)), "-s", f"BASE={base}",
        "-s", "SINKS=" + json.dumps({closed: {}}), "--no-progress",
    )  # fmt: skip
    assert code != 0 and "cannot start" in failed
    for text in (out, stats, shown, failed):
        assert PASSWORD not in text
