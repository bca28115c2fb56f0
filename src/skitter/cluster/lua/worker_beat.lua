-- worker_beat.lua: a worker's heartbeat into the roster, the roster pruned of workers
-- gone for good, and the job's control record read back: one round trip a second
-- (JobControl.beat).
--
-- KEYS[1] workers   hash: worker id -> latest heartbeat (JSON)
-- KEYS[2] seen      zset: worker id -> when its heartbeat goes stale (server ms)
-- KEYS[3] control   hash: the control record
-- ARGV[1] worker id
-- ARGV[2] heartbeat
-- ARGV[3] stale ms  how long after this beat the worker counts as gone for good
-- ARGV[4] ttl ms    how long the roster outlives its last beat
-- Returns the control record, as HGETALL's flat list.
--
-- Times are the server's (TIME: scripts replicate their effects), so workers whose
-- clocks disagree never prune each other. At most 100 stale workers go per beat, so
-- a roster left to grow (an old job) shrinks over a few beats without a long script.

local K_WORKERS, K_SEEN, K_CONTROL = KEYS[1], KEYS[2], KEYS[3]
local t = redis.call('TIME')
local now = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)

local stale = redis.call('ZRANGEBYSCORE', K_SEEN, '-inf', now, 'LIMIT', 0, 100)
if #stale > 0 then
  redis.call('HDEL', K_WORKERS, unpack(stale))
  redis.call('ZREM', K_SEEN, unpack(stale))
end
redis.call('HSET', K_WORKERS, ARGV[1], ARGV[2])
redis.call('ZADD', K_SEEN, now + tonumber(ARGV[3]), ARGV[1])
redis.call('PEXPIRE', K_WORKERS, ARGV[4])
redis.call('PEXPIRE', K_SEEN, ARGV[4])
return redis.call('HGETALL', K_CONTROL)
