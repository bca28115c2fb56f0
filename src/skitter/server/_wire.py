"""What ``skitter server --redis`` and its agents tell each other, in Redis.

The service and the agents share nothing but one Redis, so everything is in it, as
JSON or raw bytes (never pickle: an agent must not run what a key says, only read it):

- ``skitter:server:runs``: a hash, job id -> the run's ``RunSpec`` (what to run, the code
  to run it with, whether it is cancelled). An agent takes every run in it; a run that
  leaves it (ended, or interrupted by a service that stopped) is stopped everywhere.
- ``skitter:server:code:<sha256>``: a deployed version's egg, wheel or zipped directory,
  content-addressed (an agent checks the digest of what it read) and size-bounded.
- ``skitter:server:run:<job>:agents``: a hash, agent name -> its ``AgentReport`` for the
  run (its workers, their exit statuses, when it last said so, by Redis's clock).
- ``skitter:server:run:<job>:log``: a list of the workers' log lines (masked), which the
  service moves into the run's log file.
- ``skitter:server:run:<job>:items``: a stream the workers write their items to (the
  exactly-once Redis Streams sink), which the service moves into the run's items file.

The distributed job itself is the run's job id, its keys the usual
``skitter:{SPIDER:JOB}:...`` of ``skitter worker``.
"""

from __future__ import annotations

import hashlib
import io
import zipfile
from pathlib import Path, PurePosixPath

import msgspec

from skitter.exceptions import ConfigError

__all__ = [
    "RUNS",
    "AgentReport",
    "RunSpec",
    "code_key",
    "run_key",
    "unpack_tree",
    "zip_tree",
]

PREFIX = "skitter:server"
RUNS = f"{PREFIX}:runs"
#: The largest version kept in Redis (a Redis string holds 512 MB; a project is far less).
CODE_MAX_BYTES = 64 * 2**20
#: How long a version's code stays in Redis after the last run that used it was dispatched.
CODE_TTL = 7 * 86400
#: How long a run's records outlive the last agent's write to them (the service deletes
#: them when the run ends; this bounds what an agent writes after that).
RUN_KEYS_TTL = 86400
#: Log lines kept waiting for the service (the oldest go first past that).
LOG_MAX_LINES = 100_000


class RunSpec(msgspec.Struct, frozen=True):
    """One dispatched run, as every agent reads it. ``settings`` hold no secret (those are
    refused at schedule time): they are in Redis for any of its clients to read."""

    job: str
    project: str
    version: str
    spider: str
    kind: str  # egg, wheel, directory (zipped)
    code: str  # sha256 of the bytes at code_key(code)
    size: int
    settings_module: str | None = None
    args: dict[str, str] = {}
    settings: dict[str, str] = {}
    cancel: bool = False


class AgentReport(msgspec.Struct, frozen=True):
    """What an agent says of its part in one run; ``seen`` is Redis's clock (``TIME``),
    so machines whose clocks differ are judged alike."""

    state: str  # running, done (every worker exited), stopped (told to stop)
    workers: int
    seen: float
    exits: list[int] = []
    items: int = 0


_encoder = msgspec.json.Encoder()


def encode(value: RunSpec | AgentReport) -> bytes:
    return _encoder.encode(value)


def decode_spec(raw: bytes) -> RunSpec | None:
    """The spec, or None for a value that is not one (anyone with the Redis may write)."""
    try:
        return msgspec.json.decode(raw, type=RunSpec)
    except (msgspec.ValidationError, msgspec.DecodeError):
        return None


def decode_report(raw: bytes) -> AgentReport | None:
    try:
        return msgspec.json.decode(raw, type=AgentReport)
    except (msgspec.ValidationError, msgspec.DecodeError):
        return None


def code_key(digest: str) -> str:
    return f"{PREFIX}:code:{digest}"


def run_key(job: str, what: str) -> str:
    """``agents``, ``log`` or ``items`` of a run."""
    return f"{PREFIX}:run:{job}:{what}"


def digest(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()


def zip_tree(root: Path) -> bytes:
    """A deployed directory as a zip: files only, sorted, fixed times, so one tree
    always gives the same bytes (and digest)."""
    out = io.BytesIO()
    with zipfile.ZipFile(out, "w", zipfile.ZIP_DEFLATED) as archive:
        for path in sorted(p for p in root.rglob("*") if p.is_file() and not p.is_symlink()):
            info = zipfile.ZipInfo(path.relative_to(root).as_posix(), (1980, 1, 1, 0, 0, 0))
            info.external_attr = 0o644 << 16
            archive.writestr(info, path.read_bytes(), zipfile.ZIP_DEFLATED)
    data = out.getvalue()
    if len(data) > CODE_MAX_BYTES:
        raise ConfigError(
            f"{root} zips to {len(data)} bytes: more than the {CODE_MAX_BYTES} bytes a "
            "version may take in Redis"
        )
    return data


def unpack_tree(data: bytes, target: Path) -> None:
    """Unzip ``data`` into ``target``, refusing any name that would land outside it."""
    with zipfile.ZipFile(io.BytesIO(data)) as archive:
        for info in archive.infolist():
            name = PurePosixPath(info.filename)
            if name.is_absolute() or ".." in name.parts or info.is_dir():
                if info.is_dir():
                    continue
                raise ConfigError(f"the project's zip holds an unsafe name: {info.filename!r}")
            path = target.joinpath(*name.parts)
            path.parent.mkdir(parents=True, exist_ok=True)
            path.write_bytes(archive.read(info))
