"""What the service and its agents exchange through Redis: zipped project trees (the
same bytes for the same tree, nothing unpacked outside its directory) and the JSON
records (anything else is ignored, never executed)."""

from __future__ import annotations

import io
import os
import zipfile
from pathlib import Path

import pytest

from skitter.exceptions import ConfigError
from skitter.server import _wire
from skitter.server._dispatch import ending


def test_a_tree_zips_to_the_same_bytes_and_unpacks_whole(tmp_path: Path) -> None:
    tree = tmp_path / "tree"
    (tree / "pkg").mkdir(parents=True)
    (tree / "skitter.toml").write_text("[skitter]\n")
    (tree / "pkg" / "spider.py").write_text("x = 1\n")
    first = _wire.zip_tree(tree)
    os.utime(tree / "skitter.toml", (0, 0))  # a touched file: the same content, same bytes
    assert _wire.zip_tree(tree) == first
    _wire.unpack_tree(first, tmp_path / "out")
    assert (tmp_path / "out" / "pkg" / "spider.py").read_text() == "x = 1\n"


@pytest.mark.parametrize("name", ["../evil.py", "/etc/evil.py", "a/../../evil.py"])
def test_a_name_outside_the_target_is_refused(tmp_path: Path, name: str) -> None:
    out = io.BytesIO()
    with zipfile.ZipFile(out, "w") as archive:
        archive.writestr(name, "boom")
    with pytest.raises(ConfigError, match="unsafe name"):
        _wire.unpack_tree(out.getvalue(), tmp_path / "out")
    assert not (tmp_path / "evil.py").exists()


def test_records_that_are_not_json_specs_are_ignored() -> None:
    spec = _wire.RunSpec("j", "p", "v", "s", "egg", "0" * 64, 10, args={"a": "1"})
    assert _wire.decode_spec(_wire.encode(spec)) == spec
    for junk in (b"\x80\x04pickle", b"{}", b'{"job": 1}', b"[]"):
        assert _wire.decode_spec(junk) is None
    assert _wire.decode_report(b"not json") is None


def _report(state: str, seen: float, exits: tuple[int, ...] = ()) -> _wire.AgentReport:
    return _wire.AgentReport(state, 1, seen, list(exits))


@pytest.mark.parametrize(
    ("reports", "cancelling", "ended"),
    [
        ({}, False, None),  # no agent took it yet: pending
        ({}, True, ("cancelled", None)),
        ({"a": _report("running", 99.0)}, False, None),
        ({"a": _report("done", 99.0, (0,)), "b": _report("running", 99.0)}, False, None),
        ({"a": _report("done", 99.0, (0,)), "b": _report("running", 50.0)}, False, ("finished", 0)),
        ({"a": _report("running", 50.0)}, False, None),  # all silent: the tasks wait in Redis
        ({"a": _report("done", 99.0, (0, 1))}, False, ("failed", 1)),
        ({"a": _report("done", 99.0, (3,))}, False, ("monitors_failed", 3)),
        # cancelled: still waited for while an agent's workers are stopping
        ({"a": _report("stopping", 99.0), "b": _report("stopped", 99.0)}, True, None),
        ({"a": _report("stopped", 99.0), "b": _report("stopped", 99.0)}, True, ("cancelled", None)),
    ],
)
def test_when_a_dispatched_run_ends(
    reports: dict[str, _wire.AgentReport], cancelling: bool, ended: tuple[str, int | None] | None
) -> None:
    assert ending(reports, 100.0, 30.0, cancelling=cancelling) == ended
