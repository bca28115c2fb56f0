"""Running ``python -m skitter`` as a subprocess, stdout and stderr apart."""

from __future__ import annotations

import asyncio
import os
import sys
from pathlib import Path

SRC = str(Path(__file__).resolve().parents[2] / "src")


async def run_cli(*args: str, cwd: Path, env: dict[str, str] | None = None) -> tuple[int, str, str]:
    """Exit status, stdout and stderr of ``python -m skitter ARGS``."""
    base_env = {k: v for k, v in os.environ.items() if not k.startswith(("SKITTER_", "SCRAPY_"))}
    proc = await asyncio.create_subprocess_exec(
        sys.executable,
        "-m",
        "skitter",
        *args,
        cwd=cwd,
        env={**base_env, "PYTHONPATH": SRC, **(env or {})},
        stdout=asyncio.subprocess.PIPE,
        stderr=asyncio.subprocess.PIPE,
    )
    out, err = await asyncio.wait_for(proc.communicate(), timeout=90)
    assert proc.returncode is not None
    return proc.returncode, out.decode(), err.decode()
