"""Files written whole or not at all."""

from __future__ import annotations

import contextlib
import os
import tempfile
from pathlib import Path

__all__ = ["write_whole"]


def write_whole(target: Path, data: bytes) -> None:
    """Write ``data`` to ``target`` whole or not at all: into a file of its own beside it,
    then renamed over it (removed if anything fails). Its own per write: two writers of
    one path at once (two items sharing a file) must not rename each other's away."""
    fd, name = tempfile.mkstemp(prefix=f".{target.name}.", suffix=".part", dir=target.parent)
    try:
        with os.fdopen(fd, "wb") as partial:
            partial.write(data)
        os.replace(name, target)
    except BaseException:
        with contextlib.suppress(OSError):
            os.unlink(name)
        raise
