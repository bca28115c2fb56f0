"""``--redis URL``, for every command that talks to a distributed job's Redis.

A URL may carry a password (``redis://user:password@host:6379/0``). On the command line
every user of the machine can read it (``ps``, shell history), so the URL may come from
``$SKITTER_REDIS_URL`` instead; ``--redis`` wins when both are given. Either way it is
shown masked (``redis://user:***@host:6379/0``) wherever skitter prints it.

``--redis-cluster`` says the URL names any node of a Redis Cluster, ``--redis-sentinel
MASTER`` that it names a sentinel watching the master ``MASTER``; ``redis_target(args)``
is the three together (a worker also reads them from the settings ``REDIS_CLUSTER`` and
``REDIS_SENTINEL_MASTER``, which the options override).
"""

from __future__ import annotations

import argparse
import os
from collections.abc import Mapping
from typing import TYPE_CHECKING
from urllib.parse import urlsplit

from skitter._secrets import authority_problem, mask_url
from skitter.exceptions import ConfigError

if TYPE_CHECKING:
    from skitter.redis import RedisTarget

__all__ = [
    "REDIS_URL_ENV",
    "add_redis_option",
    "add_shards_option",
    "redis_target",
    "redis_url",
    "target_settings",
]

REDIS_URL_ENV = "SKITTER_REDIS_URL"
#: The sentinel's own password: an environment variable, never a command-line option.
SENTINEL_PASSWORD_ENV = "SKITTER_REDIS_SENTINEL_PASSWORD"
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
    deployment = cmd.add_mutually_exclusive_group()
    deployment.add_argument(
        "--redis-cluster",
        action="store_true",
        default=False,
        help="the --redis URL names any node of a Redis Cluster (setting REDIS_CLUSTER)",
    )
    deployment.add_argument(
        "--redis-sentinel",
        metavar="MASTER_NAME",
        default=None,
        help="the --redis URL names a sentinel; use the master it knows as MASTER_NAME "
        "(setting REDIS_SENTINEL_MASTER)",
    )


def add_shards_option(cmd: argparse.ArgumentParser, what: str) -> None:
    """Add ``--shards N`` (REDIS_SHARDS) to a command that may create a job."""
    cmd.add_argument(
        "--shards",
        type=_shard_count,
        metavar="N",
        default=None,
        help=f"{what} split the job's frontier by host over N shards, on the masters of a "
        "Redis Cluster (setting REDIS_SHARDS; fixed when the job is created)",
    )


def _shard_count(text: str) -> int:
    try:
        count = int(text)
    except ValueError:
        count = 0
    if not 1 <= count <= 1024:
        raise argparse.ArgumentTypeError(f"the number of shards is 1 to 1024, not {text!r}")
    return count


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
    problem = authority_problem(url)
    if problem is not None:
        raise ConfigError(f"Redis URL {mask_url(url)}: {problem}")
    return url


def redis_target(args: argparse.Namespace) -> RedisTarget:
    """The Redis of the command: ``redis_url(args)`` and the deployment its options name."""
    from skitter.redis import RedisTarget  # redis-py: for Redis commands only

    url = redis_url(args)
    password = os.environ.get(SENTINEL_PASSWORD_ENV) or None
    return RedisTarget(url, bool(args.redis_cluster), args.redis_sentinel or None, password)


def target_settings(args: argparse.Namespace) -> dict[str, object]:
    """The settings ``--redis-cluster`` / ``--redis-sentinel`` / ``--shards`` set for a
    worker (they override REDIS_CLUSTER / REDIS_SENTINEL_MASTER / REDIS_SHARDS from files
    and the environment)."""
    overrides: dict[str, object] = {}
    if getattr(args, "redis_cluster", False):
        overrides["REDIS_CLUSTER"] = True
    if getattr(args, "redis_sentinel", None):
        overrides["REDIS_SENTINEL_MASTER"] = args.redis_sentinel
    if getattr(args, "shards", None):
        overrides["REDIS_SHARDS"] = args.shards
    if os.environ.get(SENTINEL_PASSWORD_ENV):
        overrides["REDIS_SENTINEL_PASSWORD"] = os.environ[SENTINEL_PASSWORD_ENV]
    return overrides
