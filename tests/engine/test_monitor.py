"""The project monitor with a fake clock: windows, series, active tasks, bounded deques."""

from __future__ import annotations

from skitter._clock import FakeClock
from skitter.engine._monitor import ProjectMonitor


def test_counts_by_window() -> None:
    clock = FakeClock(start=0.0, epoch=1_000_000.0)
    mon = ProjectMonitor(clock)
    for i in range(3):
        mon.started(f"t{i}", f"http://e.com/{i}", "e.com", 1)
        mon.finished(f"t{i}", f"http://e.com/{i}", ok=True, status=200)
    clock.advance(400)  # beyond 5 minutes
    mon.started("f", "http://e.com/f", "e.com", 2)
    assert set(mon.active) == {"f"}
    mon.finished("f", "http://e.com/f", ok=False, reason="HTTP 500")
    assert mon.counts(300) == (0, 1)
    assert mon.counts(3600) == (3, 1)
    assert mon.counts() == (3, 1)
    clock.advance(3600)
    assert mon.counts(3600) == (0, 0)
    assert mon.counts() == (3, 1)
    assert [o.reason for o in mon.failures] == ["HTTP 500"]
    assert not mon.active


def test_series_and_bounded_history() -> None:
    clock = FakeClock(start=0.0, epoch=1_000_000.0)
    mon = ProjectMonitor(clock, keep=5)
    for second in range(60):
        for _ in range(second // 10):  # 0,1,2,3,4,5 per second in successive buckets
            mon.finished("t", "u", ok=True)
        clock.advance(1)
    series = mon.pages_per_second(minutes=1)
    assert len(series) == 6
    assert series[:5] == [1.0, 2.0, 3.0, 4.0, 5.0]
    assert len(mon.recent) == 5


def test_a_cluster_job_counts_its_windows_as_a_project_does() -> None:
    """The cluster dashboard samples a job's totals into the monitor's own 10-second
    buckets: the same events give the same windows and chart either way."""
    from skitter.dashboard._cluster import ClusterMonitor

    clock = FakeClock(start=0.0, epoch=1_000_000.0)
    project, job = ProjectMonitor(clock), ClusterMonitor(clock)
    job.sample(clock.time(), 0, 0)  # the baseline: counted from here
    success = failure = 0
    for step in range(400):
        clock.advance(7.3)
        for i in range(step % 4):
            ok = (step + i) % 3 != 0
            project.finished(f"t{step}.{i}", "http://e.com/", ok=ok)
            success, failure = success + ok, failure + (not ok)
        job.sample(clock.time(), success, failure)
        if step % 37 == 0:
            for window in (300, 3600):
                assert job.counts(window) == project.counts(window)
            assert job.pages_per_second(5) == project.pages_per_second(5)
    assert job.counts() == project.counts() == (success, failure)
