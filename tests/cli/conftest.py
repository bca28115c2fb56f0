"""``cli(*args)``: the ``skitter`` command (in this process: ``_cli``), stdout and stderr apart."""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import NamedTuple

import pytest

from ._cli import cli_env, run_cli, run_cli_process


class Run(NamedTuple):
    code: int
    out: str
    err: str


Cli = Callable[..., Awaitable[Run]]


@pytest.fixture
def cli_environ() -> Callable[..., dict[str, str]]:
    """``cli_environ(extra)``: the environment the ``skitter`` subprocesses get."""
    return cli_env


@pytest.fixture
def cli(tmp_path: Path) -> Cli:
    """``await cli(*args)``: the ``skitter`` command, in this process (see ``_cli``),
    in ``tmp_path`` unless told another ``cwd``."""

    async def run(*args: str, cwd: Path = tmp_path, env: dict[str, str] | None = None) -> Run:
        return Run(*await run_cli(*args, cwd=cwd, env=env))

    return run


@pytest.fixture
def cli_process(tmp_path: Path) -> Cli:
    """``await cli_process(*args)``: ``python -m skitter ARGS``, a real subprocess."""

    async def run(*args: str, cwd: Path = tmp_path, env: dict[str, str] | None = None) -> Run:
        return Run(*await run_cli_process(*args, cwd=cwd, env=env))

    return run
