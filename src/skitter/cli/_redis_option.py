"""``--redis URL``, for every command that talks to a distributed job's Redis.

A URL may carry a password (``redis://user:password@host:6379/0``). On the command line
every user of the machine can read it (``ps``, shell history), so the URL may come from
``$SKITTER_REDIS_URL`` instead; ``--redis`` wins when both are given. Either way it is
shown masked (``redis://user:***@host:6379/0``) wherever skitter prints it.
"""

from __future__ import annotations

import argparse
import os
from collections.abc import Mapping
from urllib.parse import urlsplit

from skitter._secrets import mask_url
from skitter.exceptions import ConfigError

__all__ = ["REDIS_URL_ENV", "add_redis_option", "redis_url"]

REDIS_URL_ENV = "SKITTER_REDIS_URL"
_SCHEMES = ("redis", "rediss", "unix")


def add_redis_option(cmd: argparse.ArgumentParser) -> None:
    """Add ``--redis URL`` to ``cmd``; read it back with ``redis_url(args)``."""
    cmd.add_argument(
        "--redis",
        metavar="URL",
        default=None,
        help=f"redis://[user:password@]host:port/db (default: ${REDIS_URL_ENV}, which "
        "keeps a password off the command line)",
    )


def redis_url(args: argparse.Namespace, environ: Mapping[str, str] | None = None) -> str:
    """The Redis URL of the command: ``--redis``, else ``$SKITTER_REDIS_URL``; a
    ConfigError (a one-line usage error) when neither is given or it is no Redis URL."""
    env = os.environ if environ is None else environ
    url = args.redis or env.get(REDIS_URL_ENV, "").strip()
    if not url:
        raise ConfigError(
            f"skitter {args.command} needs a Redis: pass --redis URL or set ${REDIS_URL_ENV}"
        )
    try:
        scheme = urlsplit(url).scheme
    except ValueError:
        scheme = ""
    if scheme not in _SCHEMES:
        raise ConfigError(
            f"{mask_url(url)} is not a Redis URL: use redis://[user:password@]host:port/db "
            "(or rediss:// for TLS, unix:///path/to/socket)"
        )
    return url
