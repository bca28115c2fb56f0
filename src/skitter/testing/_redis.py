"""A real ``redis-server`` for tests: private, on a free loopback port, in a temp dir.

Tests of the Redis frontier talk to a real server, never a mock: Lua semantics, NOSCRIPT
after a restart and AOF recovery are exactly what a fake would get wrong. Each
``RedisServer`` runs its own process on ``127.0.0.1`` and a port the OS handed out, so a
test never touches the machine's own Redis on 6379 (that port is refused outright).

``stop()`` and ``start()`` again keep the port and the directory, so a test can restart
Redis under a running crawl; with ``aof=True`` every write is fsynced to the append-only
file and survives the restart. ``kill()`` is the crash: SIGKILL, no final save.
``password`` makes it require one (``requirepass``; ``command`` authenticates, ``url``
does not carry it). ``args`` are more ``redis-server`` options, used from the next
``start()``; ``start(ready=False)`` returns as soon as it answers at all, even
``-LOADING`` while it loads its dataset.

The pytest glue is here too, as fixture factories, so every test module gets the same
policy: a missing ``redis-server`` skips loudly on a developer's machine but fails under
CI (``CI=true``), where a silently skipped Redis suite would hide a broken build.
"""

from __future__ import annotations

import contextlib
import os
import shutil
import socket
import subprocess
import tempfile
import time
from collections.abc import Iterator
from pathlib import Path
from types import TracebackType
from typing import Any, Literal, Self

FixtureScope = Literal["session", "package", "module", "class", "function"]

__all__ = [
    "RedisServer",
    "redis_server_fixture",
    "redis_url_fixture",
    "require_redis_server",
]

_HOST = "127.0.0.1"
_FORBIDDEN_PORT = 6379  # the machine's own Redis, if any: never ours to touch


def _free_port() -> int:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as sock:
        sock.bind((_HOST, 0))
        return int(sock.getsockname()[1])


class Started:
    """``with`` starts it and closes it, also when starting fails half-way (a server
    set that started two of its three processes must not leave them running)."""

    def start(self) -> Self:
        raise NotImplementedError

    def close(self) -> None:
        raise NotImplementedError

    def __enter__(self) -> Self:
        try:
            return self.start()
        except BaseException:
            self.close()
            raise

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        self.close()


class RedisServer(Started):
    """A ``redis-server`` process owned by the test that started it.

    ``port`` and ``directory`` default to a free port and a fresh temp dir (removed on
    ``close``). ``binary`` defaults to ``redis-server`` on PATH.
    """

    def __init__(
        self,
        *,
        aof: bool = False,
        port: int | None = None,
        directory: str | os.PathLike[str] | None = None,
        binary: str | None = None,
        startup_timeout: float = 10.0,
        password: str | None = None,
        args: list[str] | None = None,
    ) -> None:
        if port == _FORBIDDEN_PORT:
            raise ValueError("port 6379 belongs to the machine's own Redis; tests use their own")
        found = binary or shutil.which("redis-server")
        if found is None:
            raise FileNotFoundError("redis-server is not on PATH (apt-get install redis-server)")
        self.binary = found
        self.aof = aof
        self.startup_timeout = startup_timeout
        self.password = password
        self.args = list(args or [])
        self._port = port
        self._own_dir = directory is None
        self.directory = Path(directory or tempfile.mkdtemp(prefix="skitter-redis-"))
        self._process: subprocess.Popen[bytes] | None = None

    # -- lifecycle ----------------------------------------------------------------------------
    @property
    def port(self) -> int:
        if self._port is None:
            raise RuntimeError("the server has not been started yet")
        return self._port

    @property
    def url(self) -> str:
        """``redis://127.0.0.1:PORT/0``."""
        return f"redis://{_HOST}:{self.port}/0"

    @property
    def running(self) -> bool:
        return self._process is not None and self._process.poll() is None

    @property
    def log_path(self) -> Path:
        return self.directory / "redis.log"

    def _argv(self, port: int) -> list[str]:
        argv = [
            self.binary,
            "--port", str(port),
            "--bind", _HOST,
            "--dir", str(self.directory),
            "--logfile", str(self.log_path),
            "--daemonize", "no",
            "--save", "",
        ]  # fmt: skip
        if self.aof:
            argv += ["--appendonly", "yes", "--appendfsync", "always"]
        else:
            argv += ["--appendonly", "no"]
        if self.password is not None:
            argv += ["--requirepass", self.password]
        return argv + self.args

    def start(self, *, ready: bool = True) -> RedisServer:
        """Start the server (on the same port and dir as before, if it ran before) and
        wait until it answers PING (with ``ready=False``: until it answers at all)."""
        if self.running:
            raise RuntimeError(f"redis-server is already running on port {self.port}")
        fixed = self._port is not None
        for _attempt in range(1 if fixed else 5):
            port = self._port if fixed else _free_port()
            assert port is not None
            self._process = subprocess.Popen(
                self._argv(port), stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL
            )
            self._port = port
            if self._wait_ready(ready):
                return self
            if not fixed:  # lost a race for the port: try another one
                self._port = None
        raise RuntimeError(f"redis-server did not start:\n{self._log_tail()}")

    def _wait_ready(self, ready: bool = True) -> bool:
        deadline = time.monotonic() + self.startup_timeout
        while time.monotonic() < deadline:
            assert self._process is not None
            if self._process.poll() is not None:
                return False
            with contextlib.suppress(OSError):
                reply = self.command("PING")
                if reply == b"+PONG" or (not ready and reply):
                    return True
            time.sleep(0.01)
        self.kill()
        return False

    def stop(self) -> None:
        """Shut down cleanly (SIGTERM: Redis finishes the AOF fsync) and wait."""
        process = self._process
        if process is None or process.poll() is not None:
            return
        process.terminate()
        try:
            process.wait(timeout=10)
        except subprocess.TimeoutExpired:
            process.kill()
            process.wait()

    def kill(self) -> None:
        """Crash the server: SIGKILL, nothing saved beyond what was already fsynced."""
        process = self._process
        if process is not None and process.poll() is None:
            process.kill()
            process.wait()

    def close(self) -> None:
        """Stop the server and remove the directory it created."""
        self.stop()
        if self._own_dir:
            shutil.rmtree(self.directory, ignore_errors=True)

    # -- a tiny client, so the fixture needs no Redis library -------------------------------
    def command(self, *args: str) -> bytes:
        """Send one command and return the first line of the reply (e.g. ``b"+OK"``)."""
        with socket.create_connection((_HOST, self.port), timeout=2) as sock:
            if self.password is not None:
                reply = _exchange(sock, ("AUTH", self.password))
                if reply != b"+OK" and not reply.startswith(b"-LOADING"):
                    return reply
            return _exchange(sock, args)

    def flushall(self) -> None:
        reply = self.command("FLUSHALL")
        if reply != b"+OK":
            raise RuntimeError(f"FLUSHALL failed: {reply!r}")

    def _log_tail(self, lines: int = 20) -> str:
        try:
            return "\n".join(self.log_path.read_text(errors="replace").splitlines()[-lines:])
        except OSError:
            return "(no log)"

    def __repr__(self) -> str:
        state = "running" if self.running else "stopped"
        return f"<RedisServer {_HOST}:{self._port} {state} aof={self.aof}>"


def _exchange(sock: socket.socket, args: tuple[str, ...]) -> bytes:
    parts = [f"*{len(args)}\r\n".encode()]
    for arg in args:
        data = arg.encode()
        parts.append(b"$%d\r\n%s\r\n" % (len(data), data))
    sock.sendall(b"".join(parts))
    reply = b""
    while not reply.endswith(b"\r\n"):
        chunk = sock.recv(4096)
        if not chunk:
            break
        reply += chunk
    return reply.split(b"\r\n", 1)[0]


# -- pytest glue ------------------------------------------------------------------------------
def require_redis_server() -> str:
    """The ``redis-server`` binary; otherwise skip the test loudly, or fail it under CI."""
    import pytest

    binary = shutil.which("redis-server")
    if binary is not None:
        return binary
    reason = (
        "redis-server is not installed: the Redis frontier tests did NOT run "
        "(apt-get install redis-server)"
    )
    if os.environ.get("CI", "").lower() == "true":
        pytest.fail(reason + "; CI must run them")
    pytest.skip(reason)


def redis_server_fixture(*, aof: bool = False, scope: FixtureScope = "module") -> Any:
    """A fixture giving a ``RedisServer`` shared by the tests of one module::

    redis_server = redis_server_fixture()
    """
    import pytest

    @pytest.fixture(scope=scope)
    def redis_server() -> Iterator[RedisServer]:
        with RedisServer(aof=aof, binary=require_redis_server()) as server:
            yield server

    return redis_server


def redis_url_fixture() -> Any:
    """A fixture giving the URL of the module's ``redis_server``, emptied (FLUSHALL)
    before each test::

        redis_url = redis_url_fixture()
    """
    import pytest

    @pytest.fixture
    def redis_url(redis_server: RedisServer) -> str:
        if not redis_server.running:  # a test stopped it: bring it back for the next one
            redis_server.start()
        redis_server.flushall()
        return redis_server.url

    return redis_url
