"""The run history and a run's log file."""

from __future__ import annotations

from pathlib import Path

import pytest

from skitter.server._logfile import RunLog
from skitter.server._store import Run, RunStore


def test_a_run_left_running_is_interrupted_at_the_next_start(tmp_path: Path) -> None:
    store = RunStore(tmp_path / "runs.sqlite")
    store.add(Run("a", "p", "s", "1", queued_at=1.0, state="running", started_at=2.0))
    store.add(Run("b", "p", "s", "1", queued_at=1.5))
    done = Run("c", "p", "s", "1", queued_at=0.5, state="ended", outcome="finished")
    store.add(done)
    store.close()  # the service is killed: nothing else is written

    reopened, interrupted = RunStore.open(tmp_path / "runs.sqlite", now=10.0)
    assert sorted(interrupted) == ["a", "b"]
    run = reopened.get("a")
    assert run is not None and (run.state, run.outcome, run.ended_at) == (
        "ended",
        "interrupted",
        10.0,
    )
    assert reopened.get("c").outcome == "finished"  # type: ignore[union-attr]
    assert [r.job for r in reopened.query(outcome="interrupted")] == ["b", "a"]


def test_prune_keeps_the_newest(tmp_path: Path) -> None:
    store = RunStore(tmp_path / "runs.sqlite")
    for n in range(5):
        store.add(Run(f"r{n}", "p", "s", "1", queued_at=n, state="ended", outcome="finished",
                      ended_at=100.0 + n))  # fmt: skip
    gone = store.prune(keep_count=3, older_than=None)
    assert sorted(r.job for r in gone) == ["r0", "r1"]
    gone = store.prune(keep_count=None, older_than=104.0)
    assert sorted(r.job for r in gone) == ["r2", "r3"]
    assert [r.job for r in store.query()] == ["r4"]


def test_the_log_masks_secrets_and_rotates(tmp_path: Path) -> None:
    path = tmp_path / "job.log"
    log = RunLog(path, max_bytes=1024, backups=1)
    log.write_line("connecting to redis://user:hunter2@db:6379/0\n")
    for n in range(100):
        log.write_line(f"line {n:03d} " + "x" * 40)
    log.close()
    text = path.read_text()
    rotated = path.with_name("job.log.1").read_text()
    everything = text + rotated
    assert "hunter2" not in everything
    assert "line 099" in text
    assert path.stat().st_size <= 1024 and not path.with_name("job.log.2").exists()
    assert "earlier bytes of this log were dropped" in text


def test_log_limits_are_checked(tmp_path: Path) -> None:
    with pytest.raises(ValueError, match="at least 1024"):
        RunLog(tmp_path / "x.log", max_bytes=10, backups=1)
