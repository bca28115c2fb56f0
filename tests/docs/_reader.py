"""Running a page's ``console`` blocks and file blocks as a reader at a terminal would.

The commands run in a fresh directory with this environment's ``skitter`` and ``python``
first on PATH; ``cd DIR`` and ``export NAME=VALUE`` hold for the later commands, as in a
shell. A page says port 8000 for the practice site (8001 for a dashboard, 6379 for a
Redis, 6800 for ``skitter server``); the run uses a free port for each, written into the
commands, files and expected output, so that tests in parallel never share a port and
never touch the machine's own servers.
"""

from __future__ import annotations

import os
import re
import shlex
import signal
import socket
import subprocess
import sys
import threading
from collections.abc import Iterable
from pathlib import Path
from typing import IO

from ._pages import Command, FileWrite, matches

__all__ = ["Reader", "free_port"]


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


#: The ports a page may name, each played on a free one: the site, a dashboard, a
#: Redis, a ``skitter server``.
PAGE_PORTS = frozenset({8000, 8001, 6379, 6800})
_PORT = re.compile(r"(127\.0\.0\.1:|--port |--ui-port |port=)(\d+)\b")
#: Lines a background command may print before it shows what the page says it prints.
_MAX_LINES = 2000


def _environment() -> dict[str, str]:
    env = dict(os.environ)
    env["PATH"] = str(Path(sys.executable).parent) + os.pathsep + env.get("PATH", "")
    env.update({"NO_COLOR": "1", "TERM": "dumb", "COLUMNS": "100", "PYTHONUNBUFFERED": "1"})
    return {k: v for k, v in env.items() if not k.startswith("SKITTER_")}


def _where(page: Path, step: Command | FileWrite) -> str:
    return f"{page.name}, line {step.line}"


class Reader:
    """Runs a page's steps in order, as a reader at a terminal would."""

    def __init__(self, page: Path, home: Path, port: int) -> None:
        self.page = page
        self.cwd = home
        self.ports = {8000: port}
        self.env = _environment()
        self.background: list[tuple[subprocess.Popen[str], threading.Thread]] = []

    def on_ports(self, text: str) -> str:
        """``text`` with each port of the page replaced by the one this run uses."""

        def replace(found: re.Match[str]) -> str:
            said = int(found.group(2))
            if said not in PAGE_PORTS:
                return found.group(0)
            if said not in self.ports:
                self.ports[said] = free_port()
            return f"{found.group(1)}{self.ports[said]}"

        return _PORT.sub(replace, text)

    def play(self, page_steps: Iterable[Command | FileWrite]) -> None:
        """Do what a page says, in its order: write each file, run each command."""
        for step in page_steps:
            if isinstance(step, FileWrite):
                self.write(step)
            else:
                self.run(step)

    def write(self, step: FileWrite) -> None:
        path = self.cwd / step.path
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(self.on_ports(step.text), encoding="utf-8")

    def run(self, step: Command) -> None:
        command = self.on_ports(step.command)
        expected = [self.on_ports(line) for line in step.expected]
        if command.startswith("cd "):
            self.cwd = (self.cwd / shlex.split(command)[1]).resolve()
            return
        if command.startswith("export "):
            name, value = shlex.split(command)[1].split("=", 1)
            self.env[name] = value
            return
        if step.background:
            output = self._start(command.removesuffix("&").strip(), expected)
        else:
            done = subprocess.run(
                ["bash", "-c", command],
                cwd=self.cwd,
                env=self.env,
                stdout=subprocess.PIPE,
                stderr=subprocess.STDOUT,
                text=True,
                check=False,
            )
            output = done.stdout
            assert done.returncode == 0, (
                f"{_where(self.page, step)}: `{command}` exited {done.returncode}:\n{output}"
            )
        assert matches(expected, output), (
            f"{_where(self.page, step)}: `{command}` printed:\n{output}\nthe page shows:\n"
            + "\n".join(expected)
        )

    def start(self, command: str, expected: list[str]) -> str:
        """Start ``command`` in the background; what it printed until it showed
        ``expected`` (only that many lines when ``expected`` has no line of ``...``)."""
        return self._start(self.on_ports(command), [self.on_ports(e) for e in expected])

    def _start(self, command: str, expected: list[str]) -> str:
        process = subprocess.Popen(
            ["bash", "-c", f"exec {command}"],
            cwd=self.cwd,
            env=self.env,
            stdout=subprocess.PIPE,
            stderr=subprocess.STDOUT,
            text=True,
        )
        assert process.stdout is not None
        output = _read_until(process.stdout, expected)
        # read the rest as it comes: a full pipe would block the process mid-crawl
        drain = threading.Thread(target=process.stdout.read, daemon=True)
        drain.start()
        self.background.append((process, drain))
        return output

    def stop(self) -> None:
        """Ctrl-C for each background command, the latest first (a worker ends before
        the Redis it needs); one that does not end in 30 s is killed."""
        for process, drain in reversed(self.background):
            process.send_signal(signal.SIGINT)
            try:
                process.wait(timeout=30)
            except subprocess.TimeoutExpired:
                process.kill()
                process.wait()
            drain.join(timeout=30)
            if process.stdout is not None:
                process.stdout.close()
        self.background.clear()


def _read_until(stream: IO[str], expected: list[str]) -> str:
    """The lines ``stream`` gives until they are what ``expected`` shows; when every
    expected line is a line (none is only ``...``), exactly that many."""
    if all(line.strip() != "..." for line in expected):
        return "".join(stream.readline() for _ in expected)
    output = ""
    for _ in range(_MAX_LINES):
        line = stream.readline()
        output += line
        if not line or matches(expected, output):
            break
    return output
