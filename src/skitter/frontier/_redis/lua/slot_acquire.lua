-- slot_acquire.lua: take a download permit for one slot, for all workers of the job
-- together (RedisPoliteness.acquire).
--
-- KEYS[1] permits   zset: permit id -> expiry (when it lapses if never released)
-- KEYS[2] pace      hash: next (earliest next start), backoff (end of a back-off)
-- ARGV[1] now            the caller's clock, epoch seconds
-- ARGV[2] concurrency    permits the slot may have out at once
-- ARGV[3] delay          seconds from this start to the next one
-- ARGV[4] expiry         now + lease seconds
-- ARGV[5] permit id      unique: owner, object and call
-- ARGV[6] busy wait      the answer when only a finishing download can free the slot
-- ARGV[7] idle ttl       seconds each key outlives what it holds
-- Returns "0" when the permit is granted (and recorded), else the seconds to wait before
-- trying again; a string, since Redis truncates a Lua number reply to an integer.

local K_PERMITS, K_PACE = KEYS[1], KEYS[2]
local now = tonumber(ARGV[1])
local concurrency = tonumber(ARGV[2])
local delay = tonumber(ARGV[3])
local expiry = tonumber(ARGV[4])
local busy_wait = tonumber(ARGV[6])
local idle_ttl = tonumber(ARGV[7])

local function num(x)
  return string.format('%.17g', x)
end

-- Milliseconds until `until_` plus the grace, at least 1.
local function ttl(until_)
  return math.max(1, math.ceil((until_ - now + idle_ttl) * 1000))
end

-- A worker that died holding a permit (SIGKILL, lost network) frees it here, once its
-- lease has run out: the slot never loses concurrency for longer than one lease.
redis.call('ZREMRANGEBYSCORE', K_PERMITS, '-inf', ARGV[1])

local pace = redis.call('HMGET', K_PACE, 'next', 'backoff')
local next_start, backoff = tonumber(pace[1]) or 0, tonumber(pace[2]) or 0
local start_at = math.max(next_start, backoff)
if start_at > now then
  return num(start_at - now)
end

if redis.call('ZCARD', K_PERMITS) >= concurrency then
  -- Only a release (or the earliest lease running out) can free a permit.
  local first = redis.call('ZRANGE', K_PERMITS, 0, 0, 'WITHSCORES')
  return num(math.min(busy_wait, tonumber(first[2]) - now))
end

redis.call('ZADD', K_PERMITS, ARGV[4], ARGV[5])
local last = redis.call('ZRANGE', K_PERMITS, -1, -1, 'WITHSCORES')
redis.call('PEXPIRE', K_PERMITS, ttl(math.max(expiry, tonumber(last[2]))))

if backoff > 0 then
  redis.call('HDEL', K_PACE, 'backoff') -- over: forget it
end
if delay > 0 then
  redis.call('HSET', K_PACE, 'next', num(now + delay))
  redis.call('PEXPIRE', K_PACE, ttl(now + delay))
elseif next_start > 0 then
  redis.call('HDEL', K_PACE, 'next') -- a slot without delay keeps no pace key
end
return '0'
