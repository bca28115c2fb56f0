"""The one place skitter makes Redis clients: a single node, a Redis Cluster or a master
found through Sentinel, from a URL; or checks a client the caller brings.

``RedisTarget`` is what a command's ``--redis URL`` (with ``--redis-cluster`` or
``--redis-sentinel MASTER``) or the settings ``REDIS_CLUSTER`` / ``REDIS_SENTINEL_MASTER``
name; every component that talks to Redis (the frontier, the cluster helpers, the
dashboard, ``skitter job``) gets its client from ``RedisTarget.client``, so the three
deployments differ here and nowhere else.

On a Redis Cluster every key of a job carries the job's hash tag (``_keys.py``), so each
script and each MULTI/EXEC pipeline of a job touches one slot, on one node: the cluster
client sends it there and follows MOVED/ASK when slots move. redis-py's ``RedisCluster``
is no subclass of ``Redis`` but answers the same commands, scripts and pipelines this
project uses, so it is typed as ``Redis`` here (see ``client``).

Behind Sentinel the client asks the sentinel for the master's address on every new
connection; during a failover the old master is unreachable (or a replica: READONLY)
and the sentinel may name none (``MasterNotFoundError``, a ``ConnectionError``): all of
them mean "unavailable for now" (``_errors.py``), so workers pause and then go on with
the new master.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, cast
from urllib.parse import unquote, urlsplit

from redis.asyncio import Redis
from redis.asyncio.cluster import RedisCluster
from redis.asyncio.retry import Retry
from redis.asyncio.sentinel import Sentinel
from redis.backoff import ExponentialWithJitterBackoff
from redis.exceptions import AuthenticationError, ConnectionError, TimeoutError

from skitter._secrets import authority_problem, mask_url
from skitter.exceptions import ConfigError
from skitter.redis._replicated import ReplicaWait

if TYPE_CHECKING:
    from collections.abc import Mapping

__all__ = ["RedisTarget", "bytes_client", "describe", "replica_wait"]


def _retry() -> Retry:
    """Resend a command whose connection broke, a few times over about a second.

    After a Redis restart the pooled connections are dead and the first command on each
    fails; resending it on a fresh connection is what makes a restart invisible. Every
    script is safe to run twice if its first reply was lost: a push merges into itself, a
    lost lease expires and is reclaimed, a second ack finds no lease and answers False.
    Longer outages are for the worker to ride out (pause, back off, try again). A restart
    that lost the job's state is not invisible: the epoch is gone (``JobStateLost``).
    """
    return Retry(ExponentialWithJitterBackoff(base=0.05, cap=1.0), 3)


@dataclass(frozen=True)
class RedisTarget:
    """Where a job's Redis is: ``url`` names the node (``cluster=False``), any node of a
    Redis Cluster (``cluster=True``) or a sentinel watching ``sentinel_master``;
    ``sentinel_password`` is the sentinel's own (its ``requirepass``), when it has one:
    the URL's credentials are the master's. Behind Sentinel a push returns once
    ``sentinel_wait_replicas`` replicas hold it (0: at once), waiting at most
    ``sentinel_wait_timeout`` seconds (``_replicated.py``)."""

    url: str
    cluster: bool = False
    sentinel_master: str | None = None
    sentinel_password: str | None = field(default=None, repr=False)
    sentinel_wait_replicas: int = 1
    sentinel_wait_timeout: float = 1.0

    def __post_init__(self) -> None:
        if self.cluster and self.sentinel_master:
            raise ConfigError(
                "a Redis is either a Cluster or behind Sentinel: give --redis-cluster "
                "(REDIS_CLUSTER) or --redis-sentinel (REDIS_SENTINEL_MASTER), not both"
            )
        if self.cluster and self.url.startswith("unix:"):
            raise ConfigError(f"{mask_url(self.url)}: a Redis Cluster is reached over TCP")
        ReplicaWait(self.sentinel_wait_replicas, self.sentinel_wait_timeout)  # checks them
        problem = authority_problem(self.url)
        if problem is not None:  # redis-py would connect to a host named after the password
            raise ConfigError(f"Redis URL {mask_url(self.url)}: {problem}")

    @classmethod
    def of(cls, redis: str | RedisTarget) -> RedisTarget:
        """``redis`` itself, or a single node's target for a URL."""
        return redis if isinstance(redis, RedisTarget) else cls(redis)

    @classmethod
    def from_settings(cls, url: str, settings: Mapping[str, Any]) -> RedisTarget:
        """The target of ``url`` with the settings ``REDIS_CLUSTER``,
        ``REDIS_SENTINEL_MASTER``, ``REDIS_SENTINEL_PASSWORD`` (empty is none),
        ``REDIS_SENTINEL_WAIT_REPLICAS`` and ``REDIS_SENTINEL_WAIT_TIMEOUT``."""
        master = settings.get("REDIS_SENTINEL_MASTER") or None
        password = settings.get("REDIS_SENTINEL_PASSWORD") or None
        cluster = bool(settings.get("REDIS_CLUSTER", False))
        try:
            replicas = int(settings.get("REDIS_SENTINEL_WAIT_REPLICAS", 1))
            timeout = float(settings.get("REDIS_SENTINEL_WAIT_TIMEOUT", 1.0))
            return cls(url, cluster, master, password, replicas, timeout)
        except ValueError as exc:
            raise ConfigError(f"REDIS_SENTINEL_WAIT_*: {exc}") from None

    def client(self, *, decode_responses: bool = False) -> Redis:
        """A new client (the caller's to close), with a short retry on broken connections."""
        if self.cluster:
            # RedisCluster answers every command, script and pipeline skitter sends to a
            # Redis (each single-slot): a structural stand-in for Redis, not a subclass.
            cluster = RedisCluster.from_url(
                self.url, retry=_retry(), decode_responses=decode_responses
            )
            return cast("Redis", cluster)
        if self.sentinel_master:
            return self._sentinel_master(self.sentinel_master, decode_responses)
        return Redis.from_url(self.url, retry=_retry(), decode_responses=decode_responses)

    def _sentinel_master(self, name: str, decode_responses: bool) -> Redis:
        """The master ``name`` through the sentinel the URL names; the URL's credentials
        and db are the master's (the sentinel is asked with ``sentinel_password``)."""
        parts = urlsplit(self.url)
        if parts.scheme not in ("redis", "rediss") or not parts.hostname:
            raise ConfigError(f"{mask_url(self.url)}: a sentinel is named by redis://host:port")
        db = int(parts.path.lstrip("/") or 0)
        own: dict[str, Any] = {"socket_timeout": 5.0, "ssl": parts.scheme == "rediss"}
        if self.sentinel_password:
            own["password"] = self.sentinel_password
        sentinel = Sentinel(  # type: ignore[no-untyped-call]  # redis-py leaves it untyped
            [(parts.hostname, parts.port or 26379)],
            sentinel_kwargs=own,
            socket_timeout=5.0,
            ssl=parts.scheme == "rediss",
        )
        master: _SentinelMaster = sentinel.master_for(
            name,
            redis_class=_SentinelMaster,
            db=db,
            username=unquote(parts.username) if parts.username else None,
            password=unquote(parts.password) if parts.password else None,
            retry=_retry(),
            decode_responses=decode_responses,
        )
        master.replica_wait = ReplicaWait(self.sentinel_wait_replicas, self.sentinel_wait_timeout)
        return master

    def __str__(self) -> str:
        """The URL masked (never a password), and the deployment it names."""
        if self.cluster:
            return f"Redis Cluster at {mask_url(self.url)}"
        if self.sentinel_master:
            return f"master {self.sentinel_master!r} of the sentinel at {mask_url(self.url)}"
        return mask_url(self.url)


class _SentinelMaster(Redis):
    """The master's client; closing it also closes its connections to the sentinel."""

    #: How many replicas each push must reach (``RedisTarget.sentinel_wait_replicas``).
    replica_wait = ReplicaWait(1, 1.0)

    async def check_sentinels(self) -> None:
        """A sentinel that refuses us must stop the command at once: redis-py's discovery
        skips it as if it were down, so the worker would wait for a master forever."""
        for sentinel in self.connection_pool.sentinel_manager.sentinels:  # type: ignore[attr-defined]  # a SentinelConnectionPool
            kwargs = sentinel.connection_pool.connection_kwargs
            where = f"the sentinel at {kwargs.get('host')}:{kwargs.get('port')}"
            try:
                await sentinel.ping()
            except AuthenticationError as exc:  # NOAUTH, WRONGPASS, invalid password
                if "NOAUTH" in str(exc) or not kwargs.get("password"):
                    raise ConfigError(
                        f"{where} requires a password: set $SKITTER_REDIS_SENTINEL_PASSWORD "
                        "(setting REDIS_SENTINEL_PASSWORD); the --redis URL's is the master's"
                    ) from None
                raise ConfigError(
                    f"{where} refused its password ($SKITTER_REDIS_SENTINEL_PASSWORD, "
                    "setting REDIS_SENTINEL_PASSWORD)"
                ) from None
            except (ConnectionError, TimeoutError):
                continue  # down for now: waited for as any outage

    async def aclose(self, close_connection_pool: bool | None = None) -> None:
        await super().aclose(close_connection_pool)
        for sentinel in self.connection_pool.sentinel_manager.sentinels:  # type: ignore[attr-defined]  # a SentinelConnectionPool
            await sentinel.aclose()


def _connection_kwargs(client: Redis) -> dict[str, Any]:
    if isinstance(client, RedisCluster):  # the caller's cluster client
        return dict(client.get_connection_kwargs())
    return dict(client.connection_pool.connection_kwargs)


def bytes_client(redis: str | RedisTarget | Redis) -> tuple[Redis, bool]:
    """A client that answers bytes, and whether the frontier owns (and closes) it: one
    it made from a URL or target, with a short retry on broken connections; or the
    caller's, which must not decode replies (the frontier stores bytes)."""
    if isinstance(redis, str | RedisTarget):
        return RedisTarget.of(redis).client(), True
    if _connection_kwargs(redis).get("decode_responses"):
        raise ConfigError(
            "the Redis frontier stores bytes: create its client with decode_responses=False"
        )
    return redis, False


def describe(client: Redis) -> str:
    """``redis://host:port/db`` of a client (never with credentials), for messages."""
    if isinstance(client, RedisCluster):
        node = client.get_default_node()
        return f"redis-cluster://{node.host}:{node.port}" if node else "redis-cluster"
    pool = client.connection_pool
    service = getattr(pool, "service_name", None)
    if service is not None:
        return f"redis-sentinel master {service}"
    kwargs = pool.connection_kwargs
    db = kwargs.get("db", 0)
    if "path" in kwargs:
        return f"unix://{kwargs['path']}?db={db}"
    return f"redis://{kwargs.get('host', 'localhost')}:{kwargs.get('port', 6379)}/{db}"


def replica_wait(client: Redis) -> ReplicaWait | None:
    """What a push on ``client`` waits for: a master behind Sentinel (the target's
    setting; one replica for a caller's own Sentinel client), else nothing."""
    if isinstance(client, _SentinelMaster):
        return client.replica_wait
    if isinstance(client, RedisCluster):  # no connection_pool, and no Sentinel
        return None
    if getattr(client.connection_pool, "service_name", None) is not None:
        return ReplicaWait(1, 1.0)
    return None
