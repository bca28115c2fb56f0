"""``cli(*args)``: the ``skitter`` command as a real subprocess, stdout and stderr apart."""

from __future__ import annotations

import asyncio
import os
import sys
from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import NamedTuple

import pytest

SRC = str(Path(__file__).resolve().parents[2] / "src")


class Run(NamedTuple):
    code: int
    out: str
    err: str


Cli = Callable[..., Awaitable[Run]]


def cli_env(extra: dict[str, str] | None = None) -> dict[str, str]:
    """The environment without the developer's SKITTER_/SCRAPY_ variables."""
    env = {k: v for k, v in os.environ.items() if not k.startswith(("SKITTER_", "SCRAPY_"))}
    return {**env, "PYTHONPATH": SRC, **(extra or {})}


@pytest.fixture
def cli_environ() -> Callable[..., dict[str, str]]:
    """``cli_environ(extra)``: the environment the ``skitter`` subprocesses get."""
    return cli_env


@pytest.fixture
def cli(tmp_path: Path) -> Cli:
    async def run(*args: str, cwd: Path = tmp_path, env: dict[str, str] | None = None) -> Run:
        proc = await asyncio.create_subprocess_exec(
            sys.executable,
            "-m",
            "skitter",
            *args,
            cwd=cwd,
            env=cli_env(env),
            stdout=asyncio.subprocess.PIPE,
            stderr=asyncio.subprocess.PIPE,
        )
        out, err = await asyncio.wait_for(proc.communicate(), timeout=45)
        assert proc.returncode is not None
        return Run(proc.returncode, out.decode(), err.decode())

    return run
