"""A worker's ``Heartbeat`` is one msgspec struct, written and read as such: its tasks and
outcomes keep the compact array form workers have always written (so a dashboard reads
the beats of older and newer workers alike), a beat with fields it does not know still
reads, and an entry of the roster that is no heartbeat is skipped (real redis-server)."""

from __future__ import annotations

import orjson
from redis.asyncio import Redis

from skitter.cluster import Heartbeat, JobControl, OutcomeBeat, SlotBeat, TaskBeat
from skitter.redis import JobKeys

#: A heartbeat as skitter 0.1's workers wrote it (a dict, tasks and outcomes as lists).
OLDER = {
    "seen": 1700000000.5,
    "started": 1699999990.0,
    "interval": 1.0,
    "status": "running",
    "rate": 5,
    "burst": 50.0,
    "default_rate": None,
    "default_burst": None,
    "max_rate": 10.0,
    "max_burst": None,
    "lease_seconds": 30.0,
    "finish_reason": None,
    "control_error": None,
    "rate_seq": 2,
    "pause_seq": 1,
    "active": [["t1", "http://a.example/1", "a.example", 1, 1700000000.0]],
    "recent": [["t0", "http://a.example/0", True, 200, "", 3, 1699999999.0]],
    "failures": [["t9", "http://a.example/9", False, 503, "HTTP 503", 0, 1699999998.0]],
    "slots": [
        {
            "slot": "a.example",
            "in_flight": 1,
            "queued": 4,
            "done": 9,
            "failed": 1,
            "concurrency": 8,
            "delay": 0.0,
            "breaker": None,
            "backoff": 0.0,
        }
    ],
}


def test_a_beat_as_older_workers_wrote_it_reads_field_by_name() -> None:
    beat = Heartbeat.decode(orjson.dumps(OLDER))
    assert beat is not None
    assert (beat.status, beat.rate, beat.burst, beat.max_rate) == ("running", 5.0, 50.0, 10.0)
    assert (beat.rate_seq, beat.pause_seq) == (2, 1)
    assert beat.active == [TaskBeat("t1", "http://a.example/1", "a.example", 1, 1700000000.0)]
    assert beat.recent[0].items == 3 and beat.failures[0].reason == "HTTP 503"
    assert beat.slots[0].row() == OLDER["slots"][0]  # type: ignore[index]


def test_the_wire_form_is_the_one_older_dashboards_read() -> None:
    beat = Heartbeat(
        status="paused",
        active=[TaskBeat("t1", "http://a.example/1", "a.example", 2, 5.0)],
        recent=[OutcomeBeat("t0", "http://a.example/0", True, 200, "", 1, 4.0)],
        slots=[SlotBeat("a.example", in_flight=1)],
    )
    wire = orjson.loads(beat.encode())
    assert wire["active"] == [["t1", "http://a.example/1", "a.example", 2, 5.0]]
    assert wire["recent"] == [["t0", "http://a.example/0", True, 200, "", 1, 4.0]]
    assert wire["slots"][0]["slot"] == "a.example" and wire["slots"][0]["in_flight"] == 1
    assert Heartbeat.decode(beat.encode()) == beat


def test_a_newer_workers_beat_reads_without_what_it_added() -> None:
    newer = {
        **OLDER,
        "region": "eu",  # a field this version does not know
        "active": [[*OLDER["active"][0], "chromium"]],  # type: ignore[index]
    }
    beat = Heartbeat.decode(orjson.dumps(newer))
    assert beat is not None
    assert beat.active[0].slot == "a.example" and beat.active[0].started == 1700000000.0


def test_what_is_not_a_heartbeat_is_none() -> None:
    for raw in (b"not json", b"[1, 2]", b'{"seen": "yesterday"}', b'{"active": [["t1"]]}'):
        assert Heartbeat.decode(raw) is None, raw
    assert Heartbeat.decode(b"{}") == Heartbeat()


async def test_the_roster_skips_entries_that_are_not_heartbeats(
    client: Redis, keys: JobKeys
) -> None:
    control = JobControl(client, keys)
    await control.beat("w1", Heartbeat(status="running", seen=1.0))
    await client.hset(keys.workers, mapping={"junk": b"{not json", "list": b"[1]"})
    _, roster = await control.read()
    assert list(roster) == ["w1"]
    assert roster["w1"].status == "running" and roster["w1"].seen == 1.0
