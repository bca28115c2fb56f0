-- slot_release.lua: give a download permit back, maybe starting a back-off for all
-- workers (RedisPoliteness.release). _clock.lua comes first.
--
-- KEYS[1] permits   zset: permit id -> expiry
-- KEYS[2] pace      hash: next (earliest next start), backoff (end of a back-off), and
--                   the slot's token bucket (see slot_acquire.lua)
-- ARGV[1] clock, ARGV[2] the caller's now (see _clock.lua)
-- ARGV[3] permit id
-- ARGV[4] backoff until  epoch seconds on the caller's clock (moved by SKEW), or "" for
--                        no back-off
-- ARGV[5] idle ttl       seconds the pace key outlives what it holds
-- ARGV[6] outcome        "1" the download succeeded, "0" it failed, "" the slot has no
--                        circuit breaker; ARGV[7] threshold, ARGV[8] probes, ARGV[9] pause
-- ARGV[10] latency       AutoThrottle's sample, seconds ("" = not throttled or none);
--                        ARGV[11] status ("" = no response), ARGV[12] start delay,
--                        ARGV[13] max delay, ARGV[14] target concurrency, ARGV[15] the
--                        slot's configured delay (the floor)
-- ARGV[16] floor         the slot's delay with the Crawl-delay the download just read
--                        ("" = none): `floor`, for workers that have not read robots.txt
--                        yet (see slot_acquire.lua)
-- Returns 1 if the permit was still held, 0 if it had lapsed (its lease ran out, so
-- another download may have its place already) or was never granted.

local K_PERMITS, K_PACE = KEYS[1], KEYS[2]
local idle_ttl = tonumber(ARGV[5])

local expiry = tonumber(redis.call('ZSCORE', K_PERMITS, ARGV[3]))
redis.call('ZREM', K_PERMITS, ARGV[3])
local released = 0
if expiry and expiry > NOW then
  released = 1
end

if ARGV[4] ~= '' then
  local until_ = tonumber(ARGV[4]) + SKEW
  local pace = redis.call('HMGET', K_PACE, 'next', 'backoff')
  local next_start, backoff = stored_number(pace[1]) or 0, stored_number(pace[2]) or 0
  -- Back-offs from several workers (answers to one overload) never shorten each other.
  if until_ > NOW and until_ > backoff then
    redis.call('HSET', K_PACE, 'backoff', num(until_))
    local last = math.max(until_, next_start)
    local ms = math.max(1, math.ceil((last - NOW + idle_ttl) * 1000))
    if redis.call('PTTL', K_PACE) < ms then  -- never cut what the key holds (its bucket)
      redis.call('PEXPIRE', K_PACE, ms)
    end
  end
end
-- The slot's circuit breaker (see slot_acquire.lua): a success closes it, `threshold`
-- failures in a row (by any workers) open it for `pause`, as do `probes` failed probes.
-- Results that arrive while it is open belong to downloads sent before: ignored.
if ARGV[6] and ARGV[6] ~= '' then
  local threshold, probes, pause = tonumber(ARGV[7]), tonumber(ARGV[8]), tonumber(ARGV[9])
  local b = redis.call('HMGET', K_PACE, 'bstate', 'bfail')
  local bstate, bfail = b[1], tonumber(b[2]) or 0
  if bstate ~= 'open' then
    local keep = NOW
    if ARGV[6] == '1' then
      redis.call('HDEL', K_PACE, 'bstate', 'bat', 'bsent', 'bfail')
    else
      bfail = bfail + 1
      local limit = threshold
      if bstate == 'half' then
        limit = probes
      end
      if bfail >= limit then
        redis.call('HSET', K_PACE, 'bstate', 'open', 'bat', num(NOW), 'bsent', 0, 'bfail', bfail)
        keep = NOW + pause
      else
        redis.call('HSET', K_PACE, 'bfail', bfail)
      end
      local ms = math.max(1, math.ceil((keep - NOW + idle_ttl) * 1000))
      if redis.call('PTTL', K_PACE) < ms then
        redis.call('PEXPIRE', K_PACE, ms)
      end
    end
  end
end
-- AutoThrottle (scheduler/_throttle.py's rule, Scrapy's): every worker's latency moves
-- the one shared delay of the slot, which slot_acquire.lua applies.
local latency = tonumber(ARGV[10] or '')
if latency and latency >= 0 and latency < math.huge then
  local status = tonumber(ARGV[11])
  local start, max_delay = tonumber(ARGV[12]), tonumber(ARGV[13])
  local target_conc, min_delay = tonumber(ARGV[14]), tonumber(ARGV[15])
  local old = stored_number(redis.call('HGET', K_PACE, 'tdelay')) or math.max(min_delay, start)
  local target = latency / target_conc
  local new = math.max(target, (old + target) / 2)
  new = math.max(min_delay, math.min(new, max_delay))
  if status == 200 or new > old then
    redis.call('HSET', K_PACE, 'tdelay', num(new))
  elseif not redis.call('HGET', K_PACE, 'tdelay') then
    redis.call('HSET', K_PACE, 'tdelay', num(old))
  end
  local ms = math.max(1, math.ceil(idle_ttl * 1000))
  if redis.call('PTTL', K_PACE) < ms then
    redis.call('PEXPIRE', K_PACE, ms)
  end
end
local floor = tonumber(ARGV[16] or '')
if floor and floor >= 0 and floor < math.huge then
  redis.call('HSET', K_PACE, 'floor', num(floor))
  local ms = math.max(1, math.ceil(idle_ttl * 1000))
  if redis.call('PTTL', K_PACE) < ms then
    redis.call('PEXPIRE', K_PACE, ms)
  end
end
return released
