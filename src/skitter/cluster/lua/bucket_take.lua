-- bucket_take.lua: take one token from the project's token bucket, shared by all workers
-- of the job (RedisPoliteness.take_token). The same rule as scheduler/_tokenbucket.py:
-- the bucket fills at `rate` tokens a second up to `burst`, starts full, and a change of
-- rate or burst applies from this call on (tokens already earned are capped at the new
-- burst). _clock.lua comes first.
--
-- The rate is the job's, not the caller's: once the control record has one (rate_seq
-- set, by `skitter dashboard --redis` or a worker's --ui), every worker's next call uses
-- it, whatever rate that worker was started with. Before that, the caller's own rate
-- and burst (its RATE/BURST settings) apply.
--
-- KEYS[1] bucket   hash: tokens, stamp (the time tokens was computed for, Redis's clock)
-- KEYS[2] control  hash: rate ("" = unlimited), burst ("" = the default), rate_seq
-- ARGV[1] clock, ARGV[2] the caller's now (see _clock.lua)
-- ARGV[3] rate      the caller's own tokens per second, >= 0 (no rate in the record)
-- ARGV[4] burst     the caller's own burst, >= 0 (no rate in the record)
-- ARGV[5] max burst the caller's MAX_BURST ("" = none): caps the record's default burst
-- ARGV[6] max rate  the caller's MAX_RATE ("" = none)
-- Returns "0" when a token was taken, else the seconds until one is available ("inf" if
-- none ever will be); a string, since Redis truncates a Lua number reply to an integer.

local K_BUCKET, K_CONTROL = KEYS[1], KEYS[2]
local rate = tonumber(ARGV[3])
local burst = tonumber(ARGV[4])

-- The record's rate and burst, or nil, nil where this worker would refuse them (above
-- its MAX_RATE or MAX_BURST, or unlimited under a MAX_RATE: it keeps its own, as
-- WorkerPresence does); a rate of -1 is unlimited.
local function shared()
  local record = redis.call('HMGET', K_CONTROL, 'rate_seq', 'rate', 'burst')
  if (tonumber(record[1]) or 0) <= 0 then
    return nil, nil  -- never set
  end
  local max_burst, max_rate = tonumber(ARGV[5]), tonumber(ARGV[6])
  local r = stored_number(record[2])
  if not r or r < 0 then  -- "" (or not a number): unlimited
    if max_rate then
      return nil, nil
    end
    return -1, nil
  end
  if max_rate and r > max_rate then
    return nil, nil
  end
  local b = stored_number(record[3])
  if not b or b < 0 then  -- the default: ten seconds' worth, at least one, within MAX_BURST
    b = r > 0 and math.max(10 * r, 1) or 0
    if max_burst then
      b = math.min(b, max_burst)
    end
  elseif max_burst and b > max_burst then
    return nil, nil
  end
  return r, b
end

local shared_rate, shared_burst = shared()
if shared_rate == -1 then
  return '0'  -- the job's rate is unlimited: no bucket
elseif shared_rate then
  rate, burst = shared_rate, shared_burst
end

local state = redis.call('HMGET', K_BUCKET, 'tokens', 'stamp')
local tokens, stamp = refill(stored_number(state[1]), stored_number(state[2]), rate, burst)

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
