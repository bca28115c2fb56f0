"""Sinks: items written straight into databases and brokers, each exactly once.

The SINKS setting (``_options``) names them; each is a ``Sink`` (``_core``: batches,
back-pressure, outages) over a client library: PostgreSQL (psycopg), MySQL and MariaDB
(aiomysql), SQLite (the standard library), RabbitMQ (aio-pika), NATS JetStream
(nats-py) and Redis Streams (redis-py). The pipeline manager hands them every item
that passed the pipelines and feeds, with where it came from (``_identity``), and the
engine acknowledges a task only after ``flush()``: its items are committed.
"""

from __future__ import annotations

import importlib
from pathlib import Path
from typing import Any

from skitter._types import CrawlContext
from skitter.pipelines._sinks._core import Sink
from skitter.pipelines._sinks._options import SinkOptions, parse_sinks
from skitter.settings import ItemSettings

__all__ = ["Sink", "SinkOptions", "build_sinks", "parse_sinks"]

#: The class of each backend, by module and name (a backend's client is imported only
#: when a sink of it is configured).
_CLASSES = {
    "postgresql": ("_postgres", "PostgresSink"),
    "mysql": ("_mysql", "MysqlSink"),
    "sqlite": ("_sqlite", "SqliteSink"),
    "amqp": ("_amqp", "AmqpSink"),
    "nats": ("_nats", "NatsSink"),
    "redis": ("_messages", "RedisStreamSink"),
}


def sink_class(backend: str) -> type[Sink]:
    module, name = _CLASSES[backend]
    cls: type[Sink] = getattr(importlib.import_module(f"{__name__}.{module}"), name)
    return cls


def build_sinks(crawler: CrawlContext) -> list[Sink]:
    """A Sink for every entry of the SINKS setting."""
    settings = crawler.settings
    sinks = settings.view(ItemSettings).sinks
    if not sinks:
        return []
    spider = getattr(crawler, "spider", None)
    name = str(getattr(spider, "name", "") or "")
    job = getattr(crawler, "job", None)
    job_dir: Path | None = getattr(job, "path", None)
    options = parse_sinks(sinks, settings=settings, spider_name=name, job_dir=job_dir)
    clock: Any = getattr(crawler, "clock", None)
    return [
        sink_class(opt.backend)(opt, stats=crawler.stats, clock=clock, spider_name=name)
        for opt in options
    ]
