"""The Redis keys of one crawl (project and job), and what each one holds.

Every key of a crawl shares one hash tag, ``{project:job}``, so that on Redis Cluster
they live on one shard and a Lua script may touch them all. Two jobs, or two projects,
never share a key: a second crawl on the same Redis starts empty unless it names the
same job. Characters that would make two names collide (``:``, braces, ``%``) are
percent-encoded, so project ``a:b`` with job ``c`` and project ``a`` with job ``b:c``
stay apart.

For project ``shop`` and job ``nightly`` (``P = skitter:{shop:nightly}``):

====================  ======  ==================================================================
key                   type    holds
====================  ======  ==================================================================
``P:meta``            hash    ``epoch`` (random, written when the job is created: every
                              script checks it), ``created``, ``kind`` (priority/fifo/lifo),
                              ``version`` (payload format), ``seq`` (the global FIFO
                              sequence number), ``quarantined`` (entries ever moved to
                              ``bad``), ``bad_seq``, ``bad_dropped`` (oldest ``bad`` entries
                              dropped to keep it at REDIS_BAD_MAX)
``P:tasks``           hash    taskid -> record of a queued or processing task (msgpack array:
                              seq, priority, retried, where, when, owner, token, reason,
                              itag, age, auto_recrawl, url)
``P:payloads``        hash    taskid -> the request, encoded by ``skitter.http._codec``
``P:done``            hash    taskid -> last outcome of a finished task: its lastcrawltime
                              alone for a plain success, else msgpack (state, lastcrawltime,
                              itag, retried, reason, url, priority, age, auto_recrawl). The
                              dupe filter and the recrawl rule read it.
``P:ready``           zset    entry, score -priority (equal scores: FIFO by entry), or a
                      list    for the ``fifo`` and ``lifo`` kinds
``P:delayed``         zset    entry -> exetime
``P:processing``      zset    entry -> lease deadline, Redis's clock (owner and token are
                              in the record)
``P:bad``             hash    entry or taskid -> "<time> <reason>\\0<raw bytes>" of what
                              was moved aside as unreadable or unsafe; never executed;
                              the newest REDIS_BAD_MAX entries
``P:failed``          zset    taskid -> time of each FAILED task (its payload is kept, for
                              ``retry_failed``); left when the task is queued again
``P:bad_tasks``       zset    taskid -> time of each BAD task (``mark_bad``; its payload is
                              kept, for ``requeue_bad``)
``P:bad_order``       zset    field of ``P:bad`` -> its place (``bad_seq``): the oldest is
                              dropped first
====================  ======  ==================================================================

Cluster-wide politeness, the Bloom filter and shared stats (not frontier scripts' KEYS;
``S`` is a slot name, percent-encoded like project and job):

====================  ======  ==================================================================
key                   type    holds
====================  ======  ==================================================================
``P:permits:S``       zset    permit id -> expiry (Redis's clock) of a download permit
                              held for slot S (expires when idle)
``P:pace:S``          hash    ``next`` (earliest next start), ``backoff`` (back-off end) of
                              slot S (expires when both have passed)
``P:bucket``          hash    ``tokens``, ``stamp`` (Redis's clock) of the project's shared
                              token bucket
``P:start-claim``     string  the fencing token of the worker feeding the start requests
                              (expires unless renewed: ``_cluster.StartClaim``)
``P:start``           hash    ``offset`` (start requests queued so far; never moves back),
                              ``done`` (all of them were)
``P:bloom``           hash    ``bits``, ``hashes``, ``block`` (the filter's shape, fixed on
                              first use), ``count`` (fingerprints added)
``P:bloom:N``         string  block N of the Bloom filter's bitmap
``P:stats``           hash    stat -> cluster-wide sum of ``inc`` (HINCRBY/HINCRBYFLOAT)
``P:stats:max``       zset    stat -> cluster-wide ``max`` (ZADD GT)
``P:stats:set``       hash    stat -> last ``set`` value from any worker (JSON)
``P:control``         hash    ``rate``, ``burst``, ``rate_seq``, ``paused``, ``pause_seq``,
                              ``updated``: what the dashboard asks every worker to apply
``P:workers``         hash    worker id -> its latest heartbeat (JSON); the hash expires an
                              hour after the last one (see ``_control.py``)
``P:workers:seen``    zset    worker id -> when its heartbeat goes stale (Redis's clock, ms):
                              workers gone for good are pruned from the roster by it
====================  ======  ==================================================================

An *entry* is the task's sequence number as 16 hex digits followed by its taskid.
"""

from __future__ import annotations

from dataclasses import dataclass
from urllib.parse import quote, unquote

__all__ = ["JobKeys"]

_NAMES = (
    "meta",
    "tasks",
    "payloads",
    "done",
    "ready",
    "delayed",
    "processing",
    "bad",
    "failed",
    "bad_tasks",
    "bad_order",
)


def _escape(name: str, what: str) -> str:
    if not isinstance(name, str) or not name:
        raise ValueError(f"the Redis frontier needs a non-empty {what} name, got {name!r}")
    # ``quote`` leaves letters, digits and ``_.-~/`` alone and encodes ``:{}%`` and spaces.
    return quote(name, safe="/@!$&'()*+,;=")


def _glob(text: str) -> str:
    """``text`` as a literal in a SCAN MATCH pattern."""
    return "".join("\\" + c if c in "*?[]\\" else c for c in text)


@dataclass(frozen=True, slots=True)
class JobKeys:
    """The keys of one crawl, in the order every Lua script receives them as KEYS."""

    meta: str
    tasks: str
    payloads: str
    done: str
    ready: str
    delayed: str
    processing: str
    bad: str
    failed: str
    bad_tasks: str
    bad_order: str

    @classmethod
    def for_job(cls, project: str, job: str, prefix: str = "skitter") -> JobKeys:
        tag = f"{prefix}:{{{_escape(project, 'project')}:{_escape(job, 'job')}}}"
        return cls(*(f"{tag}:{name}" for name in _NAMES))

    @staticmethod
    def meta_pattern(job: str, prefix: str = "skitter") -> str:
        """A SCAN MATCH pattern for the ``meta`` key of job ``job`` of any project."""
        return f"{_glob(prefix)}:{{*:{_glob(_escape(job, 'job'))}}}:meta"

    @staticmethod
    def parse_meta(key: bytes | str, prefix: str = "skitter") -> tuple[str, str] | None:
        """(project, job) of a ``meta`` key under ``prefix``, or None if it is not one."""
        text = key.decode(errors="replace") if isinstance(key, bytes) else key
        head = f"{prefix}:{{"
        if not (text.startswith(head) and text.endswith("}:meta")):
            return None
        project, sep, job = text[len(head) : -len("}:meta")].partition(":")
        if not sep or not project or not job or any(c in job for c in ":{}"):
            return None
        return unquote(project), unquote(job)

    def all(self) -> list[str]:
        """Every key, in KEYS order."""
        return [getattr(self, name) for name in _NAMES]

    # -- keys outside the frontier scripts' KEYS (politeness, Bloom filter, stats) -----------
    @property
    def tag(self) -> str:
        """``prefix:{project:job}``: what every key of the job starts with."""
        return self.meta[: -len(":meta")]

    def permits(self, slot: str) -> str:
        """The download permits held for ``slot`` by all workers."""
        return f"{self.tag}:permits:{_escape(slot, 'slot')}"

    def pace(self, slot: str) -> str:
        """The next allowed start and the back-off end of ``slot``."""
        return f"{self.tag}:pace:{_escape(slot, 'slot')}"

    @property
    def start_claim(self) -> str:
        """Who feeds the start requests now (``StartClaim``)."""
        return f"{self.tag}:start-claim"

    @property
    def start(self) -> str:
        """How far the start requests got."""
        return f"{self.tag}:start"

    @property
    def bucket(self) -> str:
        """The project's token bucket, shared by all workers."""
        return f"{self.tag}:bucket"

    @property
    def bloom(self) -> str:
        """The Bloom filter's shape and count."""
        return f"{self.tag}:bloom"

    def bloom_block(self, index: int) -> str:
        """Block ``index`` of the Bloom filter's bitmap."""
        return f"{self.tag}:bloom:{int(index)}"

    @property
    def stats(self) -> str:
        """Cluster-wide counters."""
        return f"{self.tag}:stats"

    @property
    def stats_max(self) -> str:
        """Cluster-wide maxima."""
        return f"{self.tag}:stats:max"

    @property
    def stats_set(self) -> str:
        """Cluster-wide set values, last writer wins."""
        return f"{self.tag}:stats:set"

    @property
    def control(self) -> str:
        """The rate, burst and pause the dashboard set for every worker."""
        return f"{self.tag}:control"

    @property
    def workers(self) -> str:
        """The roster: each worker's latest heartbeat."""
        return f"{self.tag}:workers"

    @property
    def workers_seen(self) -> str:
        """When each worker in the roster goes stale, for pruning it."""
        return f"{self.tag}:workers:seen"
