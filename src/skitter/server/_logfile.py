"""``RunLog``: a run's output, masked and bounded on disk.

A run's process writes its log to a pipe; the service reads it line by line and writes
each line here with every URL's password and secret query value masked (``mask_text``),
so that a Redis URL or a proxy's credentials a spider logs never reach the file the API
serves. The file is bounded: past ``max_bytes`` it is rotated to ``NAME.1`` (the older
ones shift up to ``NAME.<backups>``, the oldest is dropped), so a crawl that logs for a
week keeps its last ``max_bytes * (backups + 1)`` bytes and never fills the disk. When
lines are dropped that way, the current file says how many bytes went, at its top.
"""

from __future__ import annotations

from pathlib import Path

from skitter._secrets import mask_text

__all__ = ["RunLog"]


class RunLog:
    """Writes lines to ``path``, rotating it past ``max_bytes`` (``backups`` old files)."""

    def __init__(self, path: Path, *, max_bytes: int, backups: int) -> None:
        if max_bytes < 1024:
            raise ValueError(f"a run's log needs at least 1024 bytes, not {max_bytes}")
        if backups < 0:
            raise ValueError(f"backups must be 0 or more, not {backups}")
        self.path = path
        self.max_bytes = max_bytes
        self.backups = backups
        self.dropped = 0  # bytes rotated out of the last backup
        path.parent.mkdir(parents=True, exist_ok=True)
        self._file = path.open("ab")
        self._size = self._file.tell()

    def write_line(self, line: str) -> None:
        data = (mask_text(line.rstrip("\r\n")) + "\n").encode("utf-8", "replace")
        if self._size + len(data) > self.max_bytes and self._size > 0:
            self._rotate()
        self._file.write(data)
        self._size += len(data)

    def flush(self) -> None:
        self._file.flush()

    def close(self) -> None:
        self._file.close()

    def _rotate(self) -> None:
        self._file.close()
        oldest = self._numbered(self.backups)
        if self.backups == 0:
            self.dropped += self.path.stat().st_size
            self.path.unlink()
        else:
            if oldest.exists():
                self.dropped += oldest.stat().st_size
                oldest.unlink()
            for number in range(self.backups - 1, 0, -1):
                if self._numbered(number).exists():
                    self._numbered(number).rename(self._numbered(number + 1))
            self.path.rename(self._numbered(1))
        self._file = self.path.open("ab")
        self._size = 0
        if self.dropped:
            note = f"[skitter server] {self.dropped} earlier bytes of this log were dropped\n"
            self._file.write(note.encode())
            self._size = len(note)

    def _numbered(self, number: int) -> Path:
        return self.path.with_name(f"{self.path.name}.{number}")
