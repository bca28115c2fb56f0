-- bucket_take.lua: take one token from the project's token bucket, shared by all workers
-- of the job (RedisPoliteness.take_token). The same rule as scheduler/_tokenbucket.py:
-- the bucket fills at `rate` tokens a second up to `burst`, starts full, and a change of
-- rate or burst applies from this call on (tokens already earned are capped at the new
-- burst). _clock.lua comes first.
--
-- KEYS[1] bucket   hash: tokens, stamp (the time tokens was computed for, Redis's clock)
-- ARGV[1] clock, ARGV[2] the caller's now (see _clock.lua)
-- ARGV[3] rate     tokens per second, >= 0
-- ARGV[4] burst    the most tokens the bucket holds, >= 0
-- Returns "0" when a token was taken, else the seconds until one is available ("inf" if
-- none ever will be); a string, since Redis truncates a Lua number reply to an integer.

local K_BUCKET = KEYS[1]
local rate = tonumber(ARGV[3])
local burst = tonumber(ARGV[4])
local EPSILON = 1e-9

local state = redis.call('HMGET', K_BUCKET, 'tokens', 'stamp')
local tokens, stamp = stored_number(state[1]), stored_number(state[2])
if not tokens or not stamp or tokens < 0 then
  tokens, stamp = burst, NOW  -- none yet, or not written by a worker: start full
end
-- The stamp never goes back: time can only earn tokens once.
if NOW > stamp then
  tokens = tokens + (NOW - stamp) * rate
  stamp = NOW
end
tokens = math.min(tokens, burst)

local wait = 0
if tokens + EPSILON >= 1 then
  tokens = math.max(0, tokens - 1)
elseif burst < 1 or rate <= 0 then
  wait = math.huge
else
  wait = (1 - tokens) / rate
end
redis.call('HSET', K_BUCKET, 'tokens', num(tokens), 'stamp', num(stamp))
if wait == math.huge then
  return 'inf'
end
return num(wait)
