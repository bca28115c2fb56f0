"""The servers sink tests write to: the machine's own, or one a test owns.

The machine runs PostgreSQL (5432), MariaDB (3306), RabbitMQ (5672), NATS with
JetStream (4222) and Redis (6379) on 127.0.0.1. A test never relies on what another left
there: it makes a database, a queue, a stream or a key prefix of its own, named at
random, and removes it (``postgres_database``, ``mysql_database``, ``fresh_name``). A
server that is not there skips the test loudly on a developer's machine and fails it
under CI (``CI=true``), as for ``redis-server``: a silently skipped sink suite would
hide a broken build.

A test that stops or kills the database starts its own: ``PostgresServer`` runs
Debian's ``initdb`` and ``postgres`` in a temp dir on a free port (as the ``postgres``
user when the test runs as root, which PostgreSQL refuses to run as).
"""

from __future__ import annotations

import contextlib
import os
import pwd
import secrets
import shutil
import socket
import subprocess
import tempfile
import time
from collections.abc import AsyncIterator, Callable
from pathlib import Path
from typing import Any

from skitter.testing._redis import Started, _free_port

__all__ = [
    "PostgresServer",
    "fresh_name",
    "mysql_database",
    "postgres_database",
    "require_postgres_binaries",
    "require_service",
]

HOST = "127.0.0.1"
SERVICES = {"postgresql": 5432, "mysql": 3306, "amqp": 5672, "nats": 4222, "redis": 6379}


def require_service(name: str) -> str:
    """``host:port`` of the machine's server ``name``; otherwise skip the test loudly, or
    fail it under CI."""
    import pytest

    port = SERVICES[name]
    try:
        with socket.create_connection((HOST, port), timeout=2):
            return f"{HOST}:{port}"
    except OSError:
        reason = f"no {name} server on {HOST}:{port}: the {name} sink tests did NOT run"
        if os.environ.get("CI", "").lower() == "true":
            pytest.fail(reason + "; CI must run them")
        pytest.skip(reason)


def fresh_name(prefix: str = "sk") -> str:
    """A name no other test uses: ``sk_3f9a0c1d2e``."""
    return f"{prefix}_{secrets.token_hex(5)}"


@contextlib.asynccontextmanager
async def postgres_database(address: str) -> AsyncIterator[str]:
    """A database of its own on the PostgreSQL at ``address``; its URI, then dropped."""
    import psycopg

    name = fresh_name()
    admin = f"postgresql://postgres@{address}/postgres"
    async with await psycopg.AsyncConnection.connect(admin, autocommit=True) as conn:
        await conn.execute(f'CREATE DATABASE "{name}"'.encode())
    try:
        yield f"postgresql://postgres@{address}/{name}"
    finally:
        async with await psycopg.AsyncConnection.connect(admin, autocommit=True) as conn:
            await conn.execute(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)'.encode())


@contextlib.asynccontextmanager
async def mysql_database(address: str) -> AsyncIterator[str]:
    """A database of its own on the MariaDB at ``address``; its URI, then dropped."""
    import aiomysql

    host, _, port = address.partition(":")
    name = fresh_name()

    async def run(statement: str) -> None:
        conn = await aiomysql.connect(host=host, port=int(port), user="root", autocommit=True)
        try:
            async with conn.cursor() as cur:
                await cur.execute(statement)
        finally:
            conn.close()

    await run(f"CREATE DATABASE `{name}`")
    try:
        yield f"mysql://root@{address}/{name}"
    finally:
        await run(f"DROP DATABASE IF EXISTS `{name}`")


class PostgresServer(Started):
    """A PostgreSQL cluster owned by the test: ``start``, ``stop`` (fast shutdown),
    ``kill`` (SIGKILL) and ``start`` again on the same port and data."""

    def __init__(self, bindir: str | None = None, startup_timeout: float = 30.0) -> None:
        found = bindir or _pg_bindir()
        if found is None:
            raise FileNotFoundError("PostgreSQL's initdb and postgres are not installed")
        self.bindir = Path(found)
        self.startup_timeout = startup_timeout
        self.directory = Path(tempfile.mkdtemp(prefix="skitter-pg-"))
        self.data = self.directory / "data"
        self._port: int | None = None
        self._process: subprocess.Popen[bytes] | None = None
        self._user = _unprivileged()

    @property
    def url(self) -> str:
        """The URI of its ``postgres`` database (trust authentication)."""
        return f"postgresql://postgres@{HOST}:{self._port}/postgres"

    def _spawn(self, argv: list[str], log: Any) -> subprocess.Popen[bytes]:
        """Run ``argv`` as the unprivileged user (set in the child itself: a wrapper such
        as runuser would get the signals meant for PostgreSQL)."""
        if self._user:
            return subprocess.Popen(argv, stdout=log, stderr=log, user=self._user, group=self._user)
        return subprocess.Popen(argv, stdout=log, stderr=log)

    def start(self) -> PostgresServer:
        if not self.data.exists():
            if self._user:
                shutil.chown(self.directory, self._user)
            initdb = self._spawn(
                [str(self.bindir / "initdb"), "-D", str(self.data), "-U", "postgres",
                 "-A", "trust", "--no-sync"],
                subprocess.DEVNULL,
            )  # fmt: skip
            if initdb.wait() != 0:
                raise RuntimeError("initdb failed")
        self._port = self._port or _free_port()
        argv = [str(self.bindir / "postgres"), "-D", str(self.data), "-p", str(self._port),
                "-k", str(self.directory), "-c", f"listen_addresses={HOST}"]  # fmt: skip
        log = open(self.directory / "postgres.log", "ab")  # noqa: SIM115 (the child's)
        self._process = self._spawn(argv, log)
        log.close()
        deadline = time.monotonic() + self.startup_timeout
        while time.monotonic() < deadline:
            if self._process.poll() is not None:
                raise RuntimeError(f"postgres did not start: {self._log_tail()}")
            if _accepts(self._port):
                time.sleep(0.2)  # the socket opens a moment before it takes logins
                return self
            time.sleep(0.05)
        raise RuntimeError(f"postgres did not start in time: {self._log_tail()}")

    def stop(self) -> None:
        self._signal(terminate=True)

    def kill(self) -> None:
        self._signal(terminate=False)

    def _signal(self, *, terminate: bool) -> None:
        process = self._process
        if process is None or process.poll() is not None:
            return
        if terminate:
            process.send_signal(2)  # SIGINT: fast shutdown
        else:
            process.kill()
        try:
            process.wait(timeout=30)
        except subprocess.TimeoutExpired:
            process.kill()
            process.wait()

    def close(self) -> None:
        self.stop()
        shutil.rmtree(self.directory, ignore_errors=True)

    def _log_tail(self) -> str:
        with contextlib.suppress(OSError):
            return (self.directory / "postgres.log").read_text(errors="replace")[-2000:]
        return "(no log)"


def _pg_bindir() -> str | None:
    initdb = shutil.which("initdb")
    if initdb is not None:
        return str(Path(os.path.realpath(initdb)).parent)
    versions = sorted(Path("/usr/lib/postgresql").glob("*/bin/initdb"))
    return str(versions[-1].parent) if versions else None


def _unprivileged() -> str | None:
    """The user to run PostgreSQL as when this process is root (it refuses root)."""
    if os.geteuid() != 0:
        return None
    with contextlib.suppress(KeyError):
        return pwd.getpwnam("postgres").pw_name
    raise RuntimeError("running as root, and there is no 'postgres' user to run PostgreSQL as")


def _accepts(port: int) -> bool:
    try:
        with socket.create_connection((HOST, port), timeout=0.5):
            return True
    except OSError:
        return False


def require_postgres_binaries() -> Callable[[], PostgresServer]:
    """``PostgresServer`` if its binaries are installed; otherwise skip (fail in CI)."""
    import pytest

    if _pg_bindir() is None:
        reason = "PostgreSQL's initdb is not installed: the sink outage tests did NOT run"
        if os.environ.get("CI", "").lower() == "true":
            pytest.fail(reason + "; CI must run them")
        pytest.skip(reason)
    return PostgresServer
