"""The Redis job services of a distributed crawl's workers.

Everything a worker shares with the other workers of its job besides the frontier
(``frontier.RedisFrontier``), each in its own module:

- ``ClusterJob`` (``_job``): one worker's membership, what the crawler composes in;
- ``StartClaim`` (``_start_claim``): start requests fed by one worker at a time;
- ``ClusterGate`` (``_gate``): the scheduler's ``Gate`` for a worker, over the job's
  shared token bucket and slot permits (``RedisPoliteness``, ``ClusterPermits``);
- ``RedisRobotsCache`` (``_robots``): robots.txt fetched once per origin for the job;
- ``RedisSessions`` (``_sessions``): SessionMiddleware's pool, shared by the workers;
- ``RedisStats`` (``_stats``): this worker's stats, added to the job's totals;
- ``JobControl`` and ``ControlRecord`` (``_control``): the dashboard's control record
  and the roster of workers; ``Heartbeat`` (``_heartbeat``) is what each worker
  publishes there, ``WorkerPresence`` (``_presence``) publishes it and applies the
  control record.

Every key name comes from ``skitter.redis.JobKeys``, every Redis error is read by
``skitter.redis.classify``, and every Lua script (``lua/``) is loaded by
``skitter.redis.register``: the Redis layer is below both the frontier and the
cluster, and the one place each of those is decided. The engine never imports this
package; the crawler does, only for a worker, so a crawl that keeps its state elsewhere
never loads redis-py.
"""

from skitter.cluster._control import ControlRecord, JobControl
from skitter.cluster._gate import ClusterGate
from skitter.cluster._heartbeat import Heartbeat, OutcomeBeat, SlotBeat, TaskBeat
from skitter.cluster._job import ClusterJob, worker_id
from skitter.cluster._permits import ClusterPermits, PermitStore
from skitter.cluster._politeness import RedisPoliteness
from skitter.cluster._presence import FAILED, SUCCEEDED, Steered, WorkerPresence
from skitter.cluster._start_claim import StartClaim
from skitter.cluster._stats import RedisStats

__all__ = [
    "FAILED",
    "SUCCEEDED",
    "ClusterGate",
    "ClusterJob",
    "ClusterPermits",
    "ControlRecord",
    "Heartbeat",
    "JobControl",
    "OutcomeBeat",
    "PermitStore",
    "RedisPoliteness",
    "RedisStats",
    "SlotBeat",
    "StartClaim",
    "Steered",
    "TaskBeat",
    "WorkerPresence",
    "worker_id",
]
