"""The ``RedisServer`` test fixture: a private redis-server that can be restarted."""

from __future__ import annotations

import pytest

from skitter.testing import _redis
from skitter.testing._redis import RedisServer, require_redis_server


@pytest.fixture(scope="module")
def binary() -> str:
    return require_redis_server()


def test_restart_keeps_port_and_aof_data(binary: str) -> None:
    with RedisServer(aof=True, binary=binary) as server:
        port = server.port
        assert server.url == f"redis://127.0.0.1:{port}/0"
        assert server.command("INCR", "n") == b":1"
        server.stop()
        assert not server.running
        server.start()
        assert server.port == port
        assert server.command("INCR", "n") == b":2", "AOF kept the write across the restart"


def test_without_aof_a_restart_starts_empty(binary: str) -> None:
    with RedisServer(binary=binary) as server:
        assert server.command("INCR", "n") == b":1"
        server.kill()
        assert not server.running
        server.start()
        assert server.command("INCR", "n") == b":1"
        server.flushall()


def test_close_removes_the_directory_it_made(binary: str) -> None:
    server = RedisServer(binary=binary).start()
    directory = server.directory
    assert directory.is_dir()
    server.close()
    assert not directory.exists()
    assert not server.running


def test_the_machines_own_redis_port_is_refused() -> None:
    with pytest.raises(ValueError, match="6379"):
        RedisServer(port=6379, binary="redis-server")


def test_missing_binary_skips_outside_ci(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(_redis.shutil, "which", lambda name: None)
    monkeypatch.delenv("CI", raising=False)
    with pytest.raises(pytest.skip.Exception, match="did NOT run"):
        require_redis_server()


def test_missing_binary_fails_under_ci(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(_redis.shutil, "which", lambda name: None)
    monkeypatch.setenv("CI", "true")
    with pytest.raises(pytest.fail.Exception, match="CI must run them"):
        require_redis_server()
