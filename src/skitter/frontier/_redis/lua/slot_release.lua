-- slot_release.lua: give a download permit back, maybe starting a back-off for all
-- workers (RedisPoliteness.release).
--
-- KEYS[1] permits   zset: permit id -> expiry
-- KEYS[2] pace      hash: next (earliest next start), backoff (end of a back-off)
-- ARGV[1] permit id
-- ARGV[2] now            the caller's clock, epoch seconds
-- ARGV[3] backoff until  epoch seconds, or "" for no back-off
-- ARGV[4] idle ttl       seconds the pace key outlives what it holds
-- Returns 1 if the permit was still held, 0 if it had lapsed (its lease ran out, so
-- another download may have its place already) or was never granted.

local K_PERMITS, K_PACE = KEYS[1], KEYS[2]
local now = tonumber(ARGV[2])
local idle_ttl = tonumber(ARGV[4])

local expiry = tonumber(redis.call('ZSCORE', K_PERMITS, ARGV[1]))
redis.call('ZREM', K_PERMITS, ARGV[1])
local released = 0
if expiry and expiry > now then
  released = 1
end

if ARGV[3] ~= '' then
  local until_ = tonumber(ARGV[3])
  local pace = redis.call('HMGET', K_PACE, 'next', 'backoff')
  local next_start, backoff = tonumber(pace[1]) or 0, tonumber(pace[2]) or 0
  -- Back-offs from several workers (answers to one overload) never shorten each other.
  if until_ > now and until_ > backoff then
    redis.call('HSET', K_PACE, 'backoff', ARGV[3])
    local last = math.max(until_, next_start)
    redis.call('PEXPIRE', K_PACE, math.max(1, math.ceil((last - now + idle_ttl) * 1000)))
  end
end
return released
