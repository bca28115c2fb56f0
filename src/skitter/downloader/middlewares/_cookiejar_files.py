"""CookieJarFiles: CookiesMiddleware's jars kept in the job directory, so that a resumed
job is still logged in.

One file per jar in ``<job dir>/cookies/``, in aiohttp's JSON format (``CookieJar.save``:
every cookie with its domain, path, flags, whether it is host-only, and its expiry as a
timestamp, so a session cookie ends when it would have). The file name is the jar's
``meta["cookiejar"]`` key as JSON, in hex, so keys come back as they were; a key that
is not a string, an integer or None cannot be named that way and its jar is not kept
(logged once).

The values are credentials, so: the directory is made 0700 and each file 0600 (created
so, never widened by the umask), nothing about a cookie is logged, and COOKIES_PERSIST
=False keeps them off the disk altogether. A jar is written only when it changed since
it was last written (``CookiesMiddleware.dirty``), to a temporary file renamed over the
old one, so a kill -9 mid-write leaves the previous jar whole. The job directory writes
the jars first in each checkpoint, before the tasks whose responses set those cookies
are recorded as done: a resumed job never has a login task done without its cookie.

Loading reads JSON only: aiohttp would fall back to unpickling a file that is not JSON,
and a job directory is no place to run pickles from. A file that is not a jar is
refused with a ConfigError naming it.
"""

from __future__ import annotations

import contextlib
import json
import logging
import os
from collections.abc import Hashable
from pathlib import Path

import orjson
from aiohttp import CookieJar

from skitter.downloader.middlewares._cookies import CookiesMiddleware
from skitter.exceptions import ConfigError, StorageError

__all__ = ["CookieJarFiles"]

logger = logging.getLogger("skitter.downloader.cookies")

_SUFFIX = ".json"


class CookieJarFiles:
    """The jars of one job directory (``directory`` is its ``cookies/``)."""

    def __init__(self, directory: Path) -> None:
        self.directory = directory
        self._unnamed: set[str] = set()

    def load(self, cookies: CookiesMiddleware) -> int:
        """Put every saved jar into ``cookies``; how many there were."""
        if not self.directory.is_dir():
            return 0
        count = 0
        for path in sorted(self.directory.glob(f"*{_SUFFIX}")):
            key = self._key_of(path)
            try:
                json.loads(path.read_text(encoding="utf-8"))
                cookies.jar(key).load(path)
            except (OSError, ValueError, TypeError, KeyError, AttributeError) as exc:
                raise ConfigError(
                    f"job cookie jar {path} cannot be read ({type(exc).__name__}); remove it "
                    "to start that session anew, or start afresh with --job-mode fresh"
                ) from None
            count += 1
        cookies.dirty.clear()
        return count

    def save(self, cookies: CookiesMiddleware) -> None:
        """Write the jars that changed since the last save; StorageError if one cannot
        be written (the checkpoint then records nothing, like a broken feed)."""
        dirty = cookies.dirty
        if not dirty:
            return
        keys = list(dirty)
        dirty.clear()
        try:
            self.directory.mkdir(mode=0o700, parents=True, exist_ok=True)
            for key in keys:
                name = self._name_of(key)
                if name is None:
                    continue
                jar = cookies.jars.get(key)
                if jar is None:  # dropped (a retired session)
                    with contextlib.suppress(FileNotFoundError):
                        (self.directory / name).unlink()
                else:
                    self._write(jar, self.directory / name)
        except OSError as exc:
            dirty.update(keys)
            raise StorageError(f"job cookie jars in {self.directory}: cannot write: {exc}") from exc

    def clear(self) -> None:
        """Forget every saved jar (a fresh job)."""
        if self.directory.is_dir():
            for path in self.directory.iterdir():
                with contextlib.suppress(FileNotFoundError):
                    path.unlink()

    @staticmethod
    def _write(jar: CookieJar, path: Path) -> None:
        temporary = path.with_name(path.name + ".tmp")
        with contextlib.suppress(FileNotFoundError):
            temporary.unlink()  # so that it is created 0600, not reused with other rights
        jar.save(temporary)
        os.replace(temporary, path)

    def _name_of(self, key: Hashable) -> str | None:
        if key is None or isinstance(key, str) or type(key) is int:
            return orjson.dumps(key).hex() + _SUFFIX
        kind = type(key).__name__
        if kind not in self._unnamed:
            self._unnamed.add(kind)
            logger.warning(
                "meta['cookiejar'] keys of type %s are not kept in the job directory "
                "(only str, int and None are): their sessions end with this run",
                kind,
            )
        return None

    @staticmethod
    def _key_of(path: Path) -> Hashable:
        try:
            key = orjson.loads(bytes.fromhex(path.name[: -len(_SUFFIX)]))
        except ValueError:
            raise ConfigError(
                f"job cookie jar {path}: the name is not a jar's; remove the file"
            ) from None
        if not (key is None or isinstance(key, str) or type(key) is int):
            raise ConfigError(f"job cookie jar {path}: the name is not a jar's; remove the file")
        return key
