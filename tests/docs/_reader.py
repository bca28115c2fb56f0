"""Running a page's ``console`` blocks and file blocks as a reader at a terminal would.

The commands run in a fresh directory with this environment's ``skitter`` and ``python``
first on PATH. A page says port 8000 for the practice site; the run uses a free one,
written into the commands, files and expected output, so that tests in parallel never
share a port.
"""

from __future__ import annotations

import os
import shlex
import signal
import socket
import subprocess
import sys
from collections.abc import Iterable
from pathlib import Path

from ._pages import Command, FileWrite, matches

__all__ = ["Reader", "free_port"]


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def _on_port(text: str, port: int) -> str:
    for said in ("127.0.0.1:{}", "--port {}", "port={}"):
        text = text.replace(said.format(8000), said.format(port))
    return text


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
        self.port = port
        self.env = _environment()
        self.background: list[subprocess.Popen[str]] = []

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
        path.write_text(_on_port(step.text, self.port), encoding="utf-8")

    def run(self, step: Command) -> None:
        command = _on_port(step.command, self.port)
        expected = [_on_port(line, self.port) for line in step.expected]
        if command.startswith("cd "):
            self.cwd = (self.cwd / shlex.split(command)[1]).resolve()
            return
        if step.background:
            output = self._start(command.removesuffix("&").strip(), len(expected))
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

    def _start(self, command: str, lines: int) -> str:
        process = subprocess.Popen(
            ["bash", "-c", f"exec {command}"],
            cwd=self.cwd,
            env=self.env,
            stdout=subprocess.PIPE,
            stderr=subprocess.STDOUT,
            text=True,
        )
        self.background.append(process)
        assert process.stdout is not None
        return "".join(process.stdout.readline() for _ in range(lines))

    def stop(self) -> None:
        for process in self.background:
            process.send_signal(signal.SIGINT)
            process.communicate(timeout=30)
