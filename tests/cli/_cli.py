"""Running the ``skitter`` command from a test, in this process: skitter's ``main(argv)``,
giving exit status, stdout and stderr as a process would. What only a process shows (a
signal, the ``python -m skitter`` entry point, a clean interpreter, ``--processes``) is
tested with real subprocesses (``run_cli_process``, the ``cli_process`` fixture,
tests/cli/test_cli.py, test_processes.py, ...).

An in-process run starts no Python: under a loaded 2-core machine a subprocess costs
seconds of start-up for every command; the command's own behaviour is the same code.
``main`` runs in a thread (it runs its own event loop, and the test's loop must keep
serving the test's site meanwhile), with the process state a command may change (the
working directory, the environment, ``sys.path``, the modules it imported from the
test's files, the loggers, stdout and stderr) set for it and put back after.
"""

from __future__ import annotations

import asyncio
import contextlib
import io
import logging
import os
import sys
import threading
from collections.abc import Iterator
from pathlib import Path
from typing import Any

SRC = str(Path(__file__).resolve().parents[2] / "src")
#: Where the modules a command may import for good live: the ones it imports from
#: anywhere else (a spider file, a project's settings) are the test's, dropped after it.
_KEPT_ROOTS = tuple(
    {SRC, sys.prefix, sys.base_prefix, sys.exec_prefix, str(Path(os.__file__).parent)}
)
#: One in-process command at a time: stdout, the directory and the environment are the
#: process's own (a test that needs two commands at once runs them as processes).
_ONE_AT_A_TIME = threading.Lock()


def cli_env(extra: dict[str, str] | None = None) -> dict[str, str]:
    """The environment without the developer's SKITTER_/SCRAPY_ variables."""
    env = {k: v for k, v in os.environ.items() if not k.startswith(("SKITTER_", "SCRAPY_"))}
    return {**env, "PYTHONPATH": SRC, **(extra or {})}


async def run_cli_process(
    *args: str, cwd: Path, env: dict[str, str] | None = None
) -> tuple[int, str, str]:
    """Exit status, stdout and stderr of ``python -m skitter ARGS``, a real process: for
    what changes the interpreter for good (``--scrapy-alias`` puts a ``scrapy`` in
    ``sys.modules``)."""
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
    out, err = await asyncio.wait_for(proc.communicate(), timeout=90)
    assert proc.returncode is not None
    return proc.returncode, out.decode(), err.decode()


async def run_cli(*args: str, cwd: Path, env: dict[str, str] | None = None) -> tuple[int, str, str]:
    """Exit status, stdout and stderr of ``skitter ARGS``, run in this process."""
    return await asyncio.to_thread(_run_main, list(args), cwd, env)


def _run_main(argv: list[str], cwd: Path, env: dict[str, str] | None) -> tuple[int, str, str]:
    from skitter.cli import main

    # Streams with a binary ``buffer`` under them, as a process's are (``-o -`` writes
    # bytes there): written through, so that text and bytes stay in order.
    out, err = (io.TextIOWrapper(io.BytesIO(), "utf-8", write_through=True) for _ in "12")
    with (
        _ONE_AT_A_TIME,
        _command_state(cwd, cli_env(env)),
        contextlib.redirect_stdout(out),
        contextlib.redirect_stderr(err),
    ):
        try:
            code = main(argv)
        except SystemExit as exc:  # argparse: a usage error, or -h
            code = exc.code if isinstance(exc.code, int) else (0 if exc.code is None else 1)
    return code, _text(out), _text(err)


def _text(stream: io.TextIOWrapper) -> str:
    stream.flush()
    raw = stream.buffer
    assert isinstance(raw, io.BytesIO)
    return raw.getvalue().decode()


@contextlib.contextmanager
def _command_state(cwd: Path, env: dict[str, str]) -> Iterator[None]:
    """The process as a fresh ``skitter`` would find it, and as it was after."""
    old_cwd, old_env, old_path = os.getcwd(), dict(os.environ), list(sys.path)
    old_modules = set(sys.modules)
    loggers = _logger_state()
    os.chdir(cwd)
    os.environ.clear()
    os.environ.update(env)
    try:
        yield
    finally:
        os.chdir(old_cwd)
        os.environ.clear()
        os.environ.update(old_env)
        sys.path[:] = old_path
        for name in set(sys.modules) - old_modules:
            if not _kept(sys.modules[name]):
                del sys.modules[name]
        _restore_loggers(loggers)


def _kept(module: Any) -> bool:
    """Whether ``module`` is skitter's, the standard library's or an installed one."""
    spec = getattr(module, "__spec__", None)
    places = [getattr(module, "__file__", None), *(getattr(module, "__path__", None) or [])]
    places = [p for p in places if p]
    if not places:  # built in, or made at run time: a test's only when named after none
        return spec is None or spec.origin in ("built-in", "frozen")
    return all(str(place).startswith(_KEPT_ROOTS) for place in places)


_LoggerState = tuple[dict[str, tuple[list[logging.Handler], int, bool, bool]], int]


def _logger_state() -> _LoggerState:
    loggers = [logging.getLogger(), *logging.Logger.manager.loggerDict.values()]
    state = {
        logger.name: (list(logger.handlers), logger.level, logger.propagate, logger.disabled)
        for logger in loggers
        if isinstance(logger, logging.Logger)
    }
    return state, logging.root.manager.disable


def _restore_loggers(state: _LoggerState) -> None:
    """Handlers the command added are closed (they write to its captured streams), and
    every logger's level, propagation and handlers are as before, and so is the level
    ``logging.disable`` set (``--nolog`` sets one for the process)."""
    loggers_state, disabled_below = state
    logging.disable(disabled_below)
    loggers = [logging.getLogger(), *logging.Logger.manager.loggerDict.values()]
    for logger in loggers:
        if not isinstance(logger, logging.Logger):
            continue
        handlers, level, propagate, disabled = loggers_state.get(
            logger.name, ([], logging.NOTSET, True, False)
        )
        for handler in logger.handlers:
            if handler not in handlers:
                handler.close()
        logger.handlers[:] = handlers
        logger.setLevel(level)
        logger.propagate, logger.disabled = propagate, disabled
