"""The FTP feed storage: the standard library's ftplib, in a thread (no dependency).

Passive mode unless ``FEED_STORAGE_FTP_ACTIVE``, as in Scrapy; the target's folders are
created as needed; ``overwrite`` False appends (``APPE``) instead of replacing
(``STOR``). Without credentials in the URI the login is anonymous.

The transfer runs in a daemon thread of its own rather than the loop's executor: a
cancelled store (a second Ctrl-C) must not keep the process alive while a stalled
server holds the transfer (up to ``TIMEOUT``).
"""

from __future__ import annotations

import asyncio
import contextlib
import ftplib
import posixpath
import threading
from pathlib import Path
from urllib.parse import unquote, urlsplit

__all__ = ["FtpFeedStorage"]

#: Seconds a connection or a transfer may stall before the store fails (and is retried).
TIMEOUT = 60.0


class FtpFeedStorage:
    """Stores a finished feed file on an FTP server."""

    name = "FTPFeedStorage"

    def __init__(self, *, active: bool = False, overwrite: bool = True) -> None:
        self._active = active
        self._overwrite = overwrite

    async def store(self, source: Path, target: str) -> None:
        loop = asyncio.get_running_loop()
        done: asyncio.Future[None] = loop.create_future()

        def settle(error: BaseException | None) -> None:
            if done.done():  # the store was cancelled meanwhile
                return
            if error is None:
                done.set_result(None)
            else:
                done.set_exception(error)

        def run() -> None:
            error: BaseException | None = None
            try:
                self._store(source, target)
            except Exception as exc:
                error = exc
            with contextlib.suppress(RuntimeError):  # the loop is gone: nobody waits
                loop.call_soon_threadsafe(settle, error)

        threading.Thread(target=run, name="skitter ftp feed upload", daemon=True).start()
        await done

    def _store(self, source: Path, target: str) -> None:
        parts = urlsplit(target)
        folder, name = posixpath.split(unquote(parts.path))
        with ftplib.FTP(timeout=TIMEOUT) as ftp:
            ftp.connect(parts.hostname or "", parts.port or 21)
            ftp.login(
                unquote(parts.username) if parts.username else "anonymous",
                unquote(parts.password) if parts.password else "guest",
            )
            ftp.set_pasv(not self._active)
            _make_dirs(ftp, folder)
            command = "STOR" if self._overwrite else "APPE"
            with open(source, "rb") as file:
                ftp.storbinary(f"{command} {name}", file)
            with contextlib.suppress(*ftplib.all_errors):
                ftp.quit()

    async def aclose(self) -> None:
        return None


def _make_dirs(ftp: ftplib.FTP, folder: str) -> None:
    """Change to ``folder``, creating what is missing of it."""
    if folder.startswith("/"):
        ftp.cwd("/")
    for part in folder.strip("/").split("/"):
        if not part:
            continue
        try:
            ftp.cwd(part)
        except ftplib.error_perm:
            ftp.mkd(part)
            ftp.cwd(part)
