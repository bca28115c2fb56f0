"""Sinks: items written straight into a database or a broker, each exactly once."""

from __future__ import annotations

from skitter.settings._setting import Setting

__all__ = ["GROUP"]

GROUP: list[Setting] = [
    Setting(
        "SINKS",
        {},
        dict,
        "Databases and brokers items are written to {uri: {options}}: postgresql://, "
        "mysql://, sqlite:, amqp://, nats://, redis:// (see Sinks).",
    ),
    Setting(
        "SINK_BATCH_SIZE",
        500,
        int,
        "Most items a sink writes in one transaction (or one round of messages); per "
        "sink: 'batch_size'.",
    ),
    Setting(
        "SINK_BATCH_DELAY",
        0.0,
        float,
        "Seconds an item may wait for more to fill its batch before it is written; 0 = "
        "write as soon as the previous write ends. Per sink: 'batch_delay'.",
    ),
    Setting(
        "SINK_OUTAGE_TIMEOUT",
        60.0,
        float,
        "Seconds a sink may stay unreachable (its items held, the crawl slowed) before "
        "the crawl fails; 0 = fail at once. Per sink: 'outage_timeout'.",
    ),
]
