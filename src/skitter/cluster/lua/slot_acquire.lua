-- slot_acquire.lua: take a download permit for one slot, for all workers of the job
-- together (RedisPoliteness.acquire). _clock.lua comes first.
--
-- KEYS[1] permits   zset: permit id -> expiry (when it lapses if never released)
-- KEYS[2] pace      hash: next (earliest next start), backoff (end of a back-off)
-- ARGV[1] clock, ARGV[2] the caller's now (see _clock.lua)
-- ARGV[3] concurrency    permits the slot may have out at once
-- ARGV[4] delay          seconds from this start to the next one
-- ARGV[5] lease seconds  the permit lapses NOW + this, unless released or renewed
-- ARGV[6] permit id      unique: owner, object and call
-- ARGV[7] busy wait      the answer when only a finishing download can free the slot
-- ARGV[8] idle ttl       seconds each key outlives what it holds
-- Returns "0" when the permit is granted (and recorded), else the seconds to wait before
-- trying again; a string, since Redis truncates a Lua number reply to an integer.
--
-- Every time is Redis's (NOW): a worker whose clock runs ahead cannot see another's
-- permits lapse early, nor its delays end early. A permit scored +inf (never lapsing)
-- or a pace that is not a finite number was not written by a worker: it is dropped.

local K_PERMITS, K_PACE = KEYS[1], KEYS[2]
local concurrency = tonumber(ARGV[3])
local delay = tonumber(ARGV[4])
local expiry = NOW + tonumber(ARGV[5])
local busy_wait = tonumber(ARGV[7])
local idle_ttl = tonumber(ARGV[8])

-- Milliseconds until `until_` plus the grace, at least 1.
local function ttl(until_)
  return math.max(1, math.ceil((until_ - NOW + idle_ttl) * 1000))
end

-- A worker that died holding a permit (SIGKILL, lost network) frees it here, once its
-- lease has run out: the slot never loses concurrency for longer than one lease.
redis.call('ZREMRANGEBYSCORE', K_PERMITS, '-inf', num(NOW))
redis.call('ZREMRANGEBYSCORE', K_PERMITS, '+inf', '+inf')

local pace = redis.call('HMGET', K_PACE, 'next', 'backoff')
local next_start, backoff = stored_number(pace[1]), stored_number(pace[2])
if (pace[1] and not next_start) or (pace[2] and not backoff) then
  redis.call('DEL', K_PACE)
end
next_start, backoff = next_start or 0, backoff or 0
local start_at = math.max(next_start, backoff)
if start_at > NOW then
  return num(start_at - NOW)
end

if redis.call('ZCARD', K_PERMITS) >= concurrency then
  -- Only a release (or the earliest lease running out) can free a permit.
  local first = redis.call('ZRANGE', K_PERMITS, 0, 0, 'WITHSCORES')
  return num(math.min(busy_wait, tonumber(first[2]) - NOW))
end

redis.call('ZADD', K_PERMITS, num(expiry), ARGV[6])
local last = redis.call('ZRANGE', K_PERMITS, -1, -1, 'WITHSCORES')
redis.call('PEXPIRE', K_PERMITS, ttl(math.max(expiry, tonumber(last[2]))))

if backoff > 0 then
  redis.call('HDEL', K_PACE, 'backoff') -- over: forget it
end
if delay > 0 then
  redis.call('HSET', K_PACE, 'next', num(NOW + delay))
  redis.call('PEXPIRE', K_PACE, ttl(NOW + delay))
elseif next_start > 0 then
  redis.call('HDEL', K_PACE, 'next') -- a slot without delay keeps no pace key
end
return '0'
