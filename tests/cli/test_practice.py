"""``skitter practice``: the practice site as a public command (a real subprocess)."""

from __future__ import annotations

import asyncio
import signal
import sys
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from pathlib import Path

import aiohttp

from skitter.testing._practice import practice_data

from ._cli import SRC, run_cli


@asynccontextmanager
async def practice(
    tmp_path: Path, *args: str
) -> AsyncIterator[tuple[str, asyncio.subprocess.Process]]:
    """``skitter practice ARGS`` running; yields the base URL its first line prints."""
    proc = await asyncio.create_subprocess_exec(
        sys.executable,
        "-m",
        "skitter",
        "practice",
        *args,
        cwd=tmp_path,
        env={"PYTHONPATH": SRC},
        stdout=asyncio.subprocess.PIPE,
        stderr=asyncio.subprocess.PIPE,
    )
    assert proc.stdout is not None
    try:
        line = (await asyncio.wait_for(proc.stdout.readline(), timeout=40)).decode()
        assert line.startswith("Practice site: http://127.0.0.1:"), line
        yield line.split()[2].rstrip("/"), proc
    finally:
        if proc.returncode is None:
            proc.kill()
            await proc.wait()


async def test_practice_serves_the_site_until_ctrl_c(tmp_path: Path) -> None:
    async with practice(tmp_path, "--port", "0") as (base, proc):
        async with aiohttp.ClientSession() as session, session.get(f"{base}/") as page:
            assert page.status == 200
            first = practice_data().quotes[0]
            assert first.author.path in await page.text()
        proc.send_signal(signal.SIGINT)
        await asyncio.wait_for(proc.wait(), timeout=40)
        assert proc.returncode == 0


async def test_a_port_in_use_is_refused_with_what_to_do(tmp_path: Path) -> None:
    async with practice(tmp_path, "--port", "0") as (base, _):
        port = base.rsplit(":", 1)[1]
        code, _, err = await run_cli("practice", "--port", port, cwd=tmp_path)
    assert code == 2, err
    assert f"cannot serve the practice site on 127.0.0.1:{port}" in err
    assert "--port N" in " ".join(err.split())


async def test_practice_help_works(tmp_path: Path) -> None:
    code, out, err = await run_cli("practice", "--help", cwd=tmp_path)
    assert code == 0, err
    assert "usage: skitter practice" in out and "--port" in out
