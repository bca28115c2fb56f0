-- _clock.lua: the time a script decides at, and checks of numbers read from Redis.
--
-- Not a script on its own: prepended to the frontier's scripts and to the cluster
-- politeness scripts (_lua.py, _scripts.py).
--
-- ARGV[1] clock: "redis" or "caller"
-- ARGV[2] now: the caller's clock, epoch seconds
--
-- With "redis" (every worker), NOW is Redis's own TIME: one clock for the whole cluster,
-- so a worker whose clock runs ahead can neither reclaim a live lease nor free a permit
-- early, nor earn tokens early. Absolute times the caller computed from its own clock
-- (an exetime, a retry time, a back-off end) are moved by SKEW = NOW - caller's now:
-- "in 30 s" stays "in 30 s", whatever the caller's clock says. Redis 7 replicates a
-- script's effects, not the script, so reading TIME before writing is allowed.
-- With "caller" (tests), NOW is the caller's now and SKEW is 0: tests drive time with
-- plain numbers.

local NOW, SKEW
do
  local caller = tonumber(ARGV[2])
  if ARGV[1] == 'redis' then
    local t = redis.call('TIME')
    NOW = tonumber(t[1]) + tonumber(t[2]) / 1000000
    SKEW = NOW - caller
  else
    NOW, SKEW = caller, 0
  end
end

-- A number as Redis should see it: exact (Lua's own tostring keeps 14 digits only).
local function num(x)
  return string.format('%.17g', x)
end

-- Anyone who can write to the Redis can plant values: nothing read back is trusted.
local function finite(x)
  return type(x) == 'number' and x == x and x > -math.huge and x < math.huge
end

-- An integer in [lo, hi] (NaN and the infinities are not).
local function int_in(x, lo, hi)
  return finite(x) and x == math.floor(x) and x >= lo and x <= hi
end

-- A stored number (a string), or nil when it is not a finite one.
local function stored_number(raw)
  local x = tonumber(raw)
  if finite(x) then
    return x
  end
  return nil
end
