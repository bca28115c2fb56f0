"""The Redis keys of one crawl (project and job), and what each one holds: the key
schema of the frontier and of the cluster services (``skitter.cluster``) alike.

Every key name comes from ``JobKeys``; nothing else builds or takes apart a key name
(``JobKeys.parse`` reads the project and job back from one, ``JobKeys.pattern`` and
``JobKeys.scan`` make SCAN patterns), so the escaping rules below hold everywhere.

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

The Bloom filter, and the cluster's politeness, start claim, shared stats and
dashboard records (not frontier scripts' KEYS;
``S`` is a slot name, percent-encoded like project and job):

====================  ======  ==================================================================
key                   type    holds
====================  ======  ==================================================================
``P:permits:S``       zset    permit id -> expiry (Redis's clock) of a download permit
                              held for slot S (expires when idle)
``P:pace:S``          hash    ``next`` (earliest next start), ``backoff`` (back-off end) of
                              slot S; its token bucket (``tokens``, ``stamp``) and circuit
                              breaker (``bstate``, ``bat``, ``bsent``, ``bfail``), shared by
                              every worker (expires when all of them have passed)
``P:robots:O``        string  robots.txt of origin O for every worker: ``=`` + its text,
                              ``-`` (no rules), or ``?`` while one worker fetches it
                              (expires: ``cluster.RedisRobotsCache``)
``P:bucket``          hash    ``tokens``, ``stamp`` (Redis's clock) of the project's shared
                              token bucket
``P:start-claim``     string  the fencing token of the worker feeding the start requests
                              (expires unless renewed: ``cluster.StartClaim``)
``P:start``           hash    ``offset`` (start requests queued so far; never moves back),
                              ``done`` (all of them were); how they ended: ``accepted``,
                              ``refused``, ``refused:N`` (``cluster.StartClaim``)
``P:start-final``     hash    ``P:start`` of a job its last worker cleared, for the worker
                              that queued the start requests to read (expires)
``P:bloom``           hash    ``bits``, ``hashes``, ``block`` (the filter's shape, fixed on
                              first use), ``count`` (fingerprints added)
``P:bloom:N``         string  block N of the Bloom filter's bitmap
``P:stats``           hash    stat -> cluster-wide sum of ``inc`` (HINCRBY/HINCRBYFLOAT)
``P:stats:max``       zset    stat -> cluster-wide ``max`` (ZADD GT)
``P:stats:set``       hash    stat -> last ``set`` value from any worker (JSON)
``P:validators``      hash    taskid -> JSON ``[etag, last_modified]`` of a recrawlable
                              task's last success, sent on its recrawl
                              (``cluster.RedisValidators``)
``P:sessions``        hash    ``made``: sessions the job's workers created (the next id)
``P:sessions:=S``     hash    session id -> JSON ``{scope, uses, proxy, fingerprint, jar}``
                              of each live session of scope S (``=`` alone: the project's):
                              uses leased so far, the proxy pool's index, the jar's version
``P:sessions:jars``   hash    session id -> its cookie jar (aiohttp's JSON): credentials,
                              kept because every worker sends them (``cluster.RedisSessions``)
``P:sessions:gone``   list    ``id reason`` of each session retired, oldest first: what
                              tells the other workers to stop using it
``P:control``         hash    ``rate``, ``burst``, ``rate_seq``, ``paused``, ``pause_seq``,
                              ``updated``: what the dashboard asks every worker to apply
``P:workers``         hash    worker id -> its latest heartbeat (JSON); the hash expires an
                              hour after the last one (``cluster.JobControl``)
``P:workers:seen``    zset    worker id -> when its heartbeat goes stale (Redis's clock, ms):
                              workers gone for good are pruned from the roster by it
====================  ======  ==================================================================

An *entry* is the task's sequence number as 16 hex digits followed by its taskid.

**Shards** (REDIS_SHARDS, ``--shards N``). A crawl too big for one Redis node splits
its frontier by host into N shards, each under a hash tag of its own, so that on a Redis
Cluster they land on different slots (on different masters) while every script still
touches one slot. Shard 0's tag is the job's own (``P``), which also holds everything
that is the job's rather than a host's (meta with the epoch and ``shards``, start,
stats, control, roster, project bucket). Shard k > 0 is ``prefix:{project:job#k.s}``:
``#`` is percent-encoded in every name, so no job's tag can look like a shard's, and
``s`` is the first salt that puts the tag in the k-th Nth of the 16384 cluster slots
after shard 0's (ranges counted from slot 0): with masters owning equal ranges of slots
(what ``redis-cli --cluster create`` does), N shards spread over N masters evenly. A host's
tasks (its queue entries, records, payloads, finished outcomes: the dupe filter),
its permits, pace and robots.txt all live on the shard ``shard_of(host)`` picks, so
politeness stays single-shard. ``shards`` lists the tags; ``shard(k)`` is shard k's
keys.
"""

from __future__ import annotations

import zlib
from dataclasses import dataclass, replace
from functools import cache
from typing import Any
from urllib.parse import quote, unquote

from redis.crc import REDIS_CLUSTER_HASH_SLOTS, key_slot

from skitter.http import url_host

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


def _tag(prefix: str, project: str, job: str) -> str:
    return f"{prefix}:{{{_escape(project, 'project')}:{_escape(job, 'job')}}}"


def _named(tag: str) -> dict[str, Any]:
    """The frontier's keys under ``tag``, by field name."""
    return {name: f"{tag}:{name}" for name in _NAMES}


def _slot(tag: str) -> int:
    return int(key_slot(tag.encode()))


@cache
def _shard_tags(tag: str, count: int) -> tuple[str, ...]:
    """The tags of ``count`` shards of the job whose tag is ``tag`` (shard 0's).

    The 16384 slots are cut in ``count`` equal ranges, counted from slot 0 as
    ``redis-cli --cluster create`` hands them to masters; shard 0 is in range r (its
    tag's), shard k in range r + k (mod count), a slot away from each edge: with N
    masters and N (or 2N, 4N...) shards, every master holds the same number of shards.
    """
    if isinstance(count, bool) or not isinstance(count, int) or not 1 <= count <= 1024:
        raise ValueError(f"a job has 1 to 1024 shards, got {count!r}")
    width = REDIS_CLUSTER_HASH_SLOTS / count
    home = int(_slot(tag) // width)
    tags = [tag]
    head = tag[:-1]  # without the closing brace
    for k in range(1, count):
        target = (home + k) % count
        low, high = int(target * width) + 1, int((target + 1) * width) - 1
        salt = 0
        while True:  # ~count tries each: the salts' slots are uniform
            candidate = f"{head}#{k}.{salt}}}"
            if low <= _slot(candidate) < high or salt >= 100 * count:
                break
            salt += 1
        tags.append(candidate)
    return tuple(tags)


@dataclass(frozen=True, slots=True)
class JobKeys:
    """The keys of one crawl. ``all()`` lists the frontier's, in the order every
    frontier script receives them as KEYS; ``tag`` is what every key of the job starts
    with (``prefix:{project:job}``), ``project`` and ``job`` the names it encodes."""

    tag: str
    project: str
    job: str
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
    #: The tags of the job's shards, shard 0's (the job's own) first.
    shards: tuple[str, ...]

    @classmethod
    def for_job(
        cls, project: str, job: str, prefix: str = "skitter", *, shards: int = 1
    ) -> JobKeys:
        """The keys of shard 0 of a job of ``shards`` shards (``shard(k)`` for the rest)."""
        tag = _tag(prefix, project, job)
        return cls(tag, project, job, shards=_shard_tags(tag, shards), **_named(tag))

    def with_shards(self, count: int) -> JobKeys:
        """These keys, for a job of ``count`` shards (a reader learns it on opening)."""
        return replace(self, shards=_shard_tags(self.shards[0], count))

    def shard(self, index: int) -> JobKeys:
        """The frontier keys of shard ``index`` (the job-wide keys stay shard 0's)."""
        tag = self.shards[index]
        return replace(self, tag=tag, **_named(tag))

    def shard_of(self, host: str) -> int:
        """The shard of ``host`` (a URL's lower-case host, a slot or an origin's host):
        the same on every machine and every run (CRC-32, not Python's salted hash)."""
        count = len(self.shards)
        return zlib.crc32(host.encode()) % count if count > 1 else 0

    def _host_tag(self, host: str) -> str:
        return self.shards[self.shard_of(host)] if len(self.shards) > 1 else self.shards[0]

    @property
    def name(self) -> str:
        """``project/job``, for messages."""
        return f"{self.project}/{self.job}"

    @staticmethod
    def pattern(name: str, job: str | None = None, prefix: str = "skitter") -> str:
        """A SCAN MATCH pattern for the key ``name`` (``meta``, ``workers``) of job
        ``job`` of any project, or of every job (``job=None``). The pattern may match
        more than such keys: check each with ``parse``."""
        inner = "*" if job is None else f"*:{_glob(_escape(job, 'job'))}"
        return f"{_glob(prefix)}:{{{inner}}}:{_glob(name)}"

    @classmethod
    def parse(
        cls, key: bytes | str, prefix: str = "skitter", *, name: str | None = None
    ) -> tuple[str, str] | None:
        """(project, job) of a key of a job under ``prefix`` (with ``name``: only of
        its key ``name``, e.g. ``meta``), or None if it is not one: its tag must be
        exactly the one ``for_job`` writes for those names."""
        text = key.decode(errors="replace") if isinstance(key, bytes) else key
        head = f"{prefix}:{{"
        end = text.find("}", len(head))
        if not text.startswith(head) or end < 0:
            return None
        rest = text[end + 1 :]
        if not rest.startswith(":") or (name is not None and rest != f":{name}"):
            return None
        project, sep, job = text[len(head) : end].partition(":")
        if not sep or not project or not job:
            return None
        project, job = unquote(project), unquote(job)
        try:
            if _tag(prefix, project, job) != text[: end + 1]:
                return None  # not escaped as skitter escapes: no job of ours
        except ValueError:
            return None
        return project, job

    def all(self) -> list[str]:
        """Every key of the frontier, in KEYS order."""
        return [getattr(self, name) for name in _NAMES]

    def scan(self, kind: str) -> list[str]:
        """SCAN MATCH patterns for every key ``kind:*`` of this job (``permits``,
        ``pace``, ``robots``: one per slot or origin), one per shard."""
        return [f"{_glob(tag)}:{kind}:*" for tag in self.shards]

    # -- keys outside the frontier scripts' KEYS (Bloom filter, cluster services) ----------
    def permits(self, slot: str) -> str:
        """The download permits held for ``slot`` by all workers."""
        return f"{self._host_tag(slot)}:permits:{_escape(slot, 'slot')}"

    def pace(self, slot: str) -> str:
        """The next allowed start and the back-off end of ``slot``."""
        return f"{self._host_tag(slot)}:pace:{_escape(slot, 'slot')}"

    def robots(self, origin: str) -> str:
        """robots.txt of ``origin`` (scheme://host[:port]), shared by every worker."""
        return f"{self._host_tag(url_host(origin))}:robots:{_escape(origin, 'origin')}"

    @property
    def start_claim(self) -> str:
        """Who feeds the start requests now (``StartClaim``)."""
        return f"{self.shards[0]}:start-claim"

    @property
    def start(self) -> str:
        """How far the start requests got, and how they ended."""
        return f"{self.shards[0]}:start"

    @property
    def start_final(self) -> str:
        """``start`` of a job cleared by its last worker (REDIS_PERSIST off)."""
        return f"{self.shards[0]}:start-final"

    @property
    def bucket(self) -> str:
        """The project's token bucket, shared by all workers."""
        return f"{self.shards[0]}:bucket"

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
        return f"{self.shards[0]}:stats"

    @property
    def stats_max(self) -> str:
        """Cluster-wide maxima."""
        return f"{self.shards[0]}:stats:max"

    @property
    def stats_set(self) -> str:
        """Cluster-wide set values, last writer wins."""
        return f"{self.shards[0]}:stats:set"

    @property
    def validators(self) -> str:
        """The conditional recrawl's validators (ETag, Last-Modified) per taskid."""
        return f"{self.shards[0]}:validators"

    @property
    def sessions(self) -> str:
        """The job's session pool: how many sessions were made (``cluster.RedisSessions``)."""
        return f"{self.shards[0]}:sessions"

    def session_scope(self, scope: str) -> str:
        """The live sessions of ``scope`` (a slot; "" is the project's)."""
        return f"{self.shards[0]}:sessions:={_escape(scope, 'scope') if scope else ''}"

    @property
    def session_jars(self) -> str:
        """Each live session's cookie jar."""
        return f"{self.shards[0]}:sessions:jars"

    @property
    def sessions_retired(self) -> str:
        """Every session retired, in order."""
        return f"{self.shards[0]}:sessions:gone"

    @property
    def control(self) -> str:
        """The rate, burst and pause the dashboard set for every worker."""
        return f"{self.shards[0]}:control"

    @property
    def workers(self) -> str:
        """The roster: each worker's latest heartbeat."""
        return f"{self.shards[0]}:workers"

    @property
    def workers_seen(self) -> str:
        """When each worker in the roster goes stale, for pruning it."""
        return f"{self.shards[0]}:workers:seen"
