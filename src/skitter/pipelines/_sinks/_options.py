"""The SINKS setting, validated: one ``SinkOptions`` per database or broker.

``SINKS`` has the shape of FEEDS, ``{uri: {option: value}}``; options may also be given
in the URI's query (``postgresql://host/db?table=items&batch_size=1000``), where they
are taken out before the URI reaches the client library (the other query parameters
are the library's: ``sslmode=require``...). Giving one option both ways is refused.

Every problem is a ``ConfigError`` naming the entry (its password masked) and what is
wrong, raised before the crawl starts: also a backend whose extra is not installed.
"""

from __future__ import annotations

import importlib.util
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any
from urllib.parse import parse_qsl, urlencode, urlsplit, urlunsplit

from skitter._components import load_object
from skitter._secrets import mask_url
from skitter.exceptions import ConfigError
from skitter.settings import ItemSettings, Settings

__all__ = ["SINK_SCHEMES", "SinkOptions", "parse_sinks"]

#: URI schemes to (backend, the module its client needs, the extra that installs it).
SINK_SCHEMES: Mapping[str, tuple[str, str | None, str | None]] = {
    "postgresql": ("postgresql", "psycopg", "postgres"),
    "postgres": ("postgresql", "psycopg", "postgres"),
    "mysql": ("mysql", "aiomysql", "mysql"),
    "mariadb": ("mysql", "aiomysql", "mysql"),
    "sqlite": ("sqlite", None, None),
    "amqp": ("amqp", "aio_pika", "amqp"),
    "amqps": ("amqp", "aio_pika", "amqp"),
    "nats": ("nats", "nats", "nats"),
    "tls": ("nats", "nats", "nats"),
    "redis": ("redis", None, None),
    "rediss": ("redis", None, None),
}
_COMMON = frozenset({"key", "item_classes", "batch_size", "batch_delay", "outage_timeout"})
_TABLE = frozenset({"table", "create", "json_column", "id_column"})
#: The options each backend knows besides the common ones.
_BACKEND_OPTIONS: Mapping[str, frozenset[str]] = {
    "postgresql": _TABLE,
    "mysql": _TABLE,
    "sqlite": _TABLE,
    "amqp": frozenset({"queue", "exchange", "routing_key"}),
    "nats": frozenset({"subject", "stream", "create", "duplicate_window"}),
    "redis": frozenset({"stream"}),
}
#: Where each backend writes: the option naming it (required).
_TARGET = {"postgresql": "table", "mysql": "table", "sqlite": "table", "nats": "subject"}
_TRUE, _FALSE = ("1", "true", "yes", "on"), ("0", "false", "no", "off")


@dataclass(frozen=True, slots=True)
class SinkOptions:
    """One validated SINKS entry."""

    #: The entry's key as given (with any password: never shown; see ``shown``).
    uri: str
    #: ``postgresql``, ``mysql``, ``sqlite``, ``amqp``, ``nats`` or ``redis``.
    backend: str
    #: The URI the client library connects to: the sink options taken out of its query.
    connect: str
    #: Where items go: the table, queue or exchange, subject, or stream key.
    target: str
    #: Fields that identify an item (``key``); () = the item class's declared key, else
    #: the task that made the item and its place in the callback's output.
    key: tuple[str, ...] = ()
    #: Only items of these classes go to this sink; the first one's fields give the
    #: table's columns.
    item_classes: tuple[type, ...] = ()
    batch_size: int = 500
    batch_delay: float = 0.0
    outage_timeout: float = 60.0
    #: Create the table (or JetStream stream) when it is missing.
    create: bool = False
    json_column: str = "data"
    id_column: str = "item_id"
    #: The backend's own options (queue, exchange, routing_key, stream, ...).
    extra: Mapping[str, Any] = field(default_factory=dict)

    @property
    def shown(self) -> str:
        """The URI as messages show it: its password masked."""
        return mask_url(self.uri)

    @property
    def label(self) -> str:
        """A short name without secrets, for statistics: ``postgresql:items``."""
        return f"{self.backend}:{self.target}"


def parse_sinks(
    sinks: Mapping[Any, Any],
    *,
    settings: Settings,
    spider_name: str = "",
    job_dir: Path | None = None,
) -> list[SinkOptions]:
    """Validate SINKS; ConfigError naming the entry and what is wrong with it.
    ``settings`` gives the SINK_* defaults; ``job_dir`` is where ``sqlite:`` without a
    path keeps its file."""
    if not isinstance(sinks, Mapping):
        raise ConfigError(f"SINKS must be a dict {{uri: options}}, not {type(sinks).__name__}")
    return [
        _parse_one(str(uri), options, settings.view(ItemSettings), spider_name, job_dir)
        for uri, options in sinks.items()
    ]


def _parse_one(
    uri: str,
    options: Any,
    own: ItemSettings,
    spider_name: str,
    job_dir: Path | None,
) -> SinkOptions:
    where = f"SINKS[{mask_url(uri)!r}]"
    if options is None:
        options = {}
    if not isinstance(options, Mapping):
        raise ConfigError(f"{where} must be a dict of options, not {type(options).__name__}")
    parts = urlsplit(uri)
    scheme = parts.scheme.lower()
    if scheme == "kafka":
        raise ConfigError(f"{where}: skitter has no Kafka sink (it could not be tested here)")
    if scheme not in SINK_SCHEMES:
        raise ConfigError(
            f"{where}: unknown sink {scheme + ':' if scheme else uri!r}; skitter writes to "
            "postgresql://, mysql:// (MariaDB), sqlite:, amqp:// (RabbitMQ), nats:// "
            "(JetStream) and redis:// (Streams)"
        )
    backend, module, extra = SINK_SCHEMES[scheme]
    if module is not None and not _installed(module):
        raise ConfigError(f"{where}: {scheme}:// sinks need pip install 'skitter[{extra}]'")
    known = _COMMON | _BACKEND_OPTIONS[backend]
    query = parse_qsl(parts.query, keep_blank_values=True)
    given = {name: value for name, value in query if name in known}
    kept = [(name, value) for name, value in query if name not in known]
    both = sorted(set(given) & set(map(str, options)))
    if both:
        raise ConfigError(f"{where}: {both} given both in the URI and in the options")
    unknown = sorted(set(map(str, options)) - known)
    if unknown:
        raise ConfigError(
            f"{where}: unknown option(s) {unknown}; {backend} sinks know {sorted(known)}"
        )
    merged: dict[str, Any] = {**given, **options}
    read = _Reader(where, merged, spider_name)
    connect = urlunsplit(parts._replace(query=urlencode(kept)))
    target = _target(backend, read, where)
    if backend == "sqlite":
        connect = str(_sqlite_path(parts, job_dir, where))
        if kept:
            raise ConfigError(f"{where}: unknown option(s) {sorted(n for n, _ in kept)}")
    json_column = read.text("json_column", "data")
    id_column = read.text("id_column", "item_id")
    classes = tuple(load_object(c) for c in read.names("item_classes"))
    if not all(isinstance(c, type) for c in classes):
        raise ConfigError(f"{where}: 'item_classes' must name classes")
    return SinkOptions(
        uri=uri,
        backend=backend,
        connect=connect,
        target=target,
        key=read.names("key"),
        item_classes=classes,
        batch_size=read.number("batch_size", own.sink_batch_size, int, least=1),
        batch_delay=read.number("batch_delay", own.sink_batch_delay, float, least=0),
        outage_timeout=read.number("outage_timeout", own.sink_outage_timeout, float, least=0),
        create=read.flag("create", backend == "sqlite"),
        json_column=json_column,
        id_column=id_column,
        extra={
            name: read.text(name, "")
            for name in ("queue", "exchange", "routing_key", "stream")
            if name in merged
        }
        | (
            {"duplicate_window": read.number("duplicate_window", 120.0, float, least=1)}
            if backend == "nats"
            else {}
        ),
    )


def _target(backend: str, read: _Reader, where: str) -> str:
    if backend == "amqp":
        queue, exchange = read.text("queue", ""), read.text("exchange", "")
        if bool(queue) == bool(exchange):
            raise ConfigError(f"{where}: give a 'queue' or an 'exchange' (with 'routing_key')")
        return queue or exchange
    if backend == "redis":
        return read.text("stream", "%(name)s:items")
    if backend == "nats" and not read.text("stream", ""):
        raise ConfigError(f"{where}: give the JetStream 'stream' that takes the subject")
    option = _TARGET[backend]
    value = read.text(option, "")
    if not value:
        raise ConfigError(f"{where}: give the {option!r} items go to")
    return value


def _sqlite_path(parts: Any, job_dir: Path | None, where: str) -> Path:
    """``sqlite:`` (in the job directory), ``sqlite:relative.db`` or
    ``sqlite:///absolute/path.db``."""
    if parts.netloc:
        raise ConfigError(f"{where}: a sqlite: sink is a local file (sqlite:///path/to/file.db)")
    if parts.path:
        return Path(parts.path).expanduser()
    if job_dir is None:
        raise ConfigError(
            f"{where}: sqlite: without a path keeps its file in the job directory; give "
            "--job-dir (JOBDIR), or a path: sqlite:items.db"
        )
    return job_dir / "items.sqlite3"


class _Reader:
    """Reads and checks one entry's option values (strings from a URI, or typed)."""

    def __init__(self, where: str, options: Mapping[str, Any], spider_name: str) -> None:
        self._where = where
        self._options = options
        self._spider = spider_name

    def text(self, name: str, default: str) -> str:
        value = self._options.get(name, default)
        if not isinstance(value, str):
            raise ConfigError(f"{self._where}: {name!r} must be a name, not {value!r}")
        if "%(" in value:
            try:
                value = value % {"name": self._spider}
            except (KeyError, ValueError, TypeError) as exc:
                raise ConfigError(
                    f"{self._where}: {name!r} {value!r}: bad placeholder ({exc}); the only "
                    "one is %(name)s, the spider's name"
                ) from None
        return value

    def names(self, name: str) -> tuple[str, ...]:
        value = self._options.get(name, ())
        if isinstance(value, str):
            value = [part.strip() for part in value.split(",") if part.strip()]
        if not isinstance(value, list | tuple) or not all(isinstance(v, str | type) for v in value):
            raise ConfigError(f"{self._where}: {name!r} must be a list of names, not {value!r}")
        return tuple(value)

    def number(self, name: str, default: Any, kind: type, *, least: float) -> Any:
        value = self._options.get(name, default)
        try:
            if isinstance(value, bool):
                raise ValueError
            number = kind(value) if isinstance(value, str) else value
            if not isinstance(number, int | float) or (kind is int and number != int(number)):
                raise ValueError
        except ValueError:
            number = None
        if number is None or number < least:
            word = "a whole number" if kind is int else "a number of seconds"
            raise ConfigError(f"{self._where}: {name!r} must be {word} >= {least:g}, not {value!r}")
        return kind(number)

    def flag(self, name: str, default: bool) -> bool:
        value = self._options.get(name, default)
        if isinstance(value, str) and value.lower() in _TRUE + _FALSE:
            return value.lower() in _TRUE
        if not isinstance(value, bool):
            raise ConfigError(f"{self._where}: {name!r} must be true or false, not {value!r}")
        return value


def _installed(module: str) -> bool:
    try:
        return importlib.util.find_spec(module) is not None
    except ModuleNotFoundError:
        return False
