"""Real Redis deployments for tests: a 3-master Redis Cluster and a Sentinel set.

Users run skitter on Redis Cluster and behind Sentinel; a mock of either would get wrong
exactly what matters (MOVED and CROSSSLOT replies, a master replaced under a running
crawl). So these start real ``redis-server`` processes, each a ``RedisServer`` on its
own free loopback port and temp dir:

- ``RedisClusterSet``: ``masters`` servers with ``cluster-enabled yes``, joined with
  ``redis-cli --cluster create`` (all slots split between them, no replicas), returned
  once every node reports ``cluster_state:ok``;
- ``SentinelSet``: one master, one replica of it, one sentinel (quorum 1) watching it
  as ``master_name``; ``kill_master()`` is the crash a failover exists for,
  ``failover()`` the operator's ``SENTINEL FAILOVER``, and ``wait_failover()`` returns
  once the sentinel names the replica as the master.
"""

from __future__ import annotations

import shutil
import subprocess
import time
from typing import Any

from skitter.testing._redis import (
    _HOST,
    RedisServer,
    Started,
    _free_port,
    require_redis_server,
)

__all__ = ["RedisClusterSet", "SentinelSet", "redis_cli", "require_deploy_tools"]


def redis_cli(port: int, *args: str, timeout: float = 10.0, password: str | None = None) -> str:
    """Run ``redis-cli -h 127.0.0.1 -p PORT ARGS...`` and return what it printed."""
    binary = shutil.which("redis-cli")
    if binary is None:
        raise FileNotFoundError("redis-cli is not on PATH (apt-get install redis-tools)")
    auth = ["-a", password, "--no-auth-warning"] if password is not None else []
    done = subprocess.run(
        [binary, "-h", _HOST, "-p", str(port), *auth, *args],
        capture_output=True,
        text=True,
        timeout=timeout,
        check=False,
    )
    return done.stdout + done.stderr


def _wait(what: str, check: Any, timeout: float = 20.0) -> None:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if check():
            return
        time.sleep(0.05)
    raise RuntimeError(f"timed out waiting for {what}")


class RedisClusterSet(Started):
    """``masters`` cluster-enabled redis-servers joined into one Redis Cluster; with
    ``password``, each requires it (``url`` does not carry it)."""

    def __init__(
        self, masters: int = 3, *, binary: str | None = None, password: str | None = None
    ) -> None:
        self.password = password
        args = ["--cluster-enabled", "yes", "--cluster-config-file", "nodes.conf",
                "--cluster-node-timeout", "2000"]  # fmt: skip
        self.nodes = [
            RedisServer(binary=binary, args=args, password=password) for _ in range(masters)
        ]

    @property
    def url(self) -> str:
        """The URL of the first node: any node is where a cluster client starts."""
        return self.nodes[0].url

    def start(self) -> RedisClusterSet:
        for node in self.nodes:
            node.start()
        addresses = [f"{_HOST}:{node.port}" for node in self.nodes]
        out = redis_cli(
            self.nodes[0].port,
            "--cluster", "create", *addresses, "--cluster-yes",
            password=self.password,
        )  # fmt: skip
        if "All 16384 slots covered" not in out:
            raise RuntimeError(f"redis-cli --cluster create failed:\n{out}")
        _wait("cluster_state:ok on every node", self._ok)
        return self

    def _ok(self) -> bool:
        return all(
            "cluster_state:ok" in redis_cli(node.port, "CLUSTER", "INFO", password=self.password)
            for node in self.nodes
        )

    def flushall(self) -> None:
        for node in self.nodes:
            node.flushall()

    def close(self) -> None:
        for node in self.nodes:
            node.close()


class SentinelSet(Started):
    """One master, one replica, one sentinel (quorum 1) watching them as ``master_name``."""

    def __init__(
        self,
        master_name: str = "skitter",
        *,
        binary: str | None = None,
        sentinel_password: str | None = None,
    ) -> None:
        self.master_name = master_name
        self.binary = binary
        #: The sentinel's own ``requirepass`` (None: it takes no password).
        self.sentinel_password = sentinel_password
        self.master = RedisServer(binary=binary)
        self.replica: RedisServer | None = None
        self.sentinel: RedisServer | None = None

    @property
    def url(self) -> str:
        """The sentinel's URL: what ``--redis`` names with ``--redis-sentinel``."""
        assert self.sentinel is not None, "not started"
        return f"redis://{_HOST}:{self.sentinel.port}/0"

    def start(self) -> SentinelSet:
        self.master.start()
        self.replica = RedisServer(
            binary=self.binary, args=["--replicaof", _HOST, str(self.master.port)]
        ).start()
        replica = self.replica
        _wait("the replica in sync", lambda: "master_link_status:up" in self._info(replica))
        port = _free_port()
        directory = replica.directory.parent / f"{replica.directory.name}-sentinel"
        directory.mkdir()
        (directory / "sentinel.conf").write_text(
            f"port {port}\nbind {_HOST}\ndaemonize no\ndir {directory}\n"
            f"logfile {directory}/redis.log\n"
            f"sentinel monitor {self.master_name} {_HOST} {self.master.port} 1\n"
            f"sentinel down-after-milliseconds {self.master_name} 1000\n"
            f"sentinel failover-timeout {self.master_name} 5000\n"
        )
        # RedisServer runs ``redis-server`` with these args after its own: a config file
        # first is what --sentinel needs, so the server's own options go on top of it.
        self.sentinel = _SentinelServer(directory, port, self.binary, self.sentinel_password)
        self.sentinel.start()
        _wait("the sentinel to see the replica", self._sees_replica)
        return self

    def _sentinel_cli(self, *args: str) -> str:
        assert self.sentinel is not None
        return redis_cli(self.sentinel.port, *args, password=self.sentinel_password)

    def _info(self, server: RedisServer) -> str:
        return redis_cli(server.port, "INFO", "replication")

    def _sees_replica(self) -> bool:
        assert self.sentinel is not None
        out = self._sentinel_cli("SENTINEL", "REPLICAS", self.master_name)
        return "flags\nslave\n" in out

    def master_port(self) -> int:
        """The port the sentinel names as the master's."""
        assert self.sentinel is not None
        out = self._sentinel_cli("SENTINEL", "GET-MASTER-ADDR-BY-NAME", self.master_name)
        return int(out.split()[1])

    def kill_master(self) -> None:
        """SIGKILL the master: the sentinel fails over to the replica a second later."""
        self.master.kill()

    def failover(self) -> None:
        """``SENTINEL FAILOVER``: promote the replica while the master still runs (the
        old master is turned into a replica of the new one)."""
        assert self.sentinel is not None
        out = self._sentinel_cli("SENTINEL", "FAILOVER", self.master_name)
        if "OK" not in out:
            raise RuntimeError(f"SENTINEL FAILOVER failed: {out}")

    def wait_failover(self, timeout: float = 20.0) -> None:
        assert self.replica is not None
        replica = self.replica
        _wait("the failover", lambda: self.master_port() == replica.port, timeout)

    def close(self) -> None:
        for server in (self.sentinel, self.replica, self.master):
            if server is not None:
                server.close()


class _SentinelServer(RedisServer):
    """``redis-server sentinel.conf --sentinel`` in ``directory`` on ``port``."""

    def __init__(
        self, directory: Any, port: int, binary: str | None, password: str | None = None
    ) -> None:
        super().__init__(directory=directory, port=port, binary=binary, password=password)

    def _argv(self, port: int) -> list[str]:
        conf = str(self.directory / "sentinel.conf")
        argv = [self.binary, conf, "--sentinel", "--port", str(port), "--bind", _HOST]
        if self.password is not None:
            argv += ["--requirepass", self.password]
        return argv

    def close(self) -> None:
        self.stop()
        shutil.rmtree(self.directory, ignore_errors=True)


def require_deploy_tools() -> None:
    """``redis-server`` and ``redis-cli``; otherwise a loud skip, or a failure under CI."""
    require_redis_server()
    if shutil.which("redis-cli") is None:
        import os

        import pytest

        reason = "redis-cli is not installed: the Redis Cluster/Sentinel tests did NOT run"
        if os.environ.get("CI", "").lower() == "true":
            pytest.fail(reason + "; CI must run them")
        pytest.skip(reason)
