"""``skitter push URL... [--redis URL] --job NAME --spider NAME``: queue URLs for workers.

The pushed requests go through the same frontier script as the workers' own, so a URL
the job has already crawled (or queued) is not queued twice. A job that does not exist
is refused unless ``--create``: a typo in a name, or a Redis that lost the job's state,
must not start a new empty job that nobody crawls.
"""

from __future__ import annotations

import argparse
import time
from collections import Counter

from rich.console import Console

from skitter.exceptions import ConfigError, InvalidURL, JobStateLost
from skitter.http import Request

__all__ = ["push_urls"]


async def push_urls(args: argparse.Namespace, console: Console) -> int:
    from skitter.frontier.redis import ShardedRedisFrontier
    from skitter.redis import check_access

    try:
        requests = [Request(url, priority=args.priority) for url in args.urls]
        for request in requests:
            request.fingerprint  # noqa: B018 - a URL that cannot be parsed fails here
    except InvalidURL as exc:
        raise ConfigError(str(exc)) from None
    if args.shards and not args.create:
        raise ConfigError("--shards is for a job that --create makes: a job keeps its own")
    frontier = ShardedRedisFrontier(
        args.redis_target,
        project=args.spider,
        job=args.job,
        kind=None,
        shards=args.shards if args.create else None,
        create=args.create,
    )
    try:
        await check_access(frontier.client, args.redis)  # refused credentials: exit 2
        try:
            if await frontier.open_job():
                console.print(f"Created job {args.job!r} for spider {args.spider!r}")
        except JobStateLost:
            raise ConfigError(
                f"no job {args.job!r} for spider {args.spider!r} on {frontier.where}; "
                "start a worker first, or pass --create"
            ) from None
        outcomes = await frontier.push(requests, time.time())
    finally:
        await frontier.close()
    counts = Counter(outcome.name.lower() for outcome in outcomes)
    queued = counts["new"] + counts["recrawl"]
    console.print(
        f"{queued} queued for job {args.job!r} ({counts['merged']} already queued, "
        f"{counts['ignored']} already crawled)"
    )
    return 0
