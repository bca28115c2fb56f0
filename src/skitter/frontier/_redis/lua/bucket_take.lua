-- bucket_take.lua: take one token from the project's token bucket, shared by all workers
-- of the job (RedisPoliteness.take_token). The same rule as scheduler/_tokenbucket.py:
-- the bucket fills at `rate` tokens a second up to `burst`, starts full, and a change of
-- rate or burst applies from this call on (tokens already earned are capped at the new
-- burst).
--
-- KEYS[1] bucket   hash: tokens, stamp (the time tokens was computed for)
-- ARGV[1] now      the caller's clock, epoch seconds
-- ARGV[2] rate     tokens per second, >= 0
-- ARGV[3] burst    the most tokens the bucket holds, >= 0
-- Returns "0" when a token was taken, else the seconds until one is available ("inf" if
-- none ever will be); a string, since Redis truncates a Lua number reply to an integer.

local K_BUCKET = KEYS[1]
local now = tonumber(ARGV[1])
local rate = tonumber(ARGV[2])
local burst = tonumber(ARGV[3])
local EPSILON = 1e-9

local state = redis.call('HMGET', K_BUCKET, 'tokens', 'stamp')
local tokens, stamp = tonumber(state[1]), tonumber(state[2])
if not tokens or not stamp then
  tokens, stamp = burst, now
end
-- A worker whose clock is behind the stamp earns nothing, and the stamp never goes
-- back: clock skew between workers can delay tokens, never mint extra ones.
if now > stamp then
  tokens = tokens + (now - stamp) * rate
  stamp = now
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
redis.call('HSET', K_BUCKET, 'tokens', string.format('%.17g', tokens),
  'stamp', string.format('%.17g', stamp))
if wait == math.huge then
  return 'inf'
end
return string.format('%.17g', wait)
