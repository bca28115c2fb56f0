-- slot_acquire.lua: take a download permit for one slot, for all workers of the job
-- together (RedisPoliteness.acquire). _clock.lua comes first.
--
-- KEYS[1] permits   zset: permit id -> expiry (when it lapses if never released)
-- KEYS[2] pace      hash: next (earliest next start), backoff (end of a back-off), and
--                   the slot's token bucket (DOWNLOAD_SLOT_RATE): tokens, stamp, and
--                   its circuit breaker: bstate (open/half), bat, bsent, bfail, and
--                   AutoThrottle's delay: tdelay
-- ARGV[1] clock, ARGV[2] the caller's now (see _clock.lua)
-- ARGV[3] concurrency    permits the slot may have out at once
-- ARGV[4] delay          seconds from this start to the next one
-- ARGV[5] lease seconds  the permit lapses NOW + this, unless released or renewed
-- ARGV[6] permit id      unique: owner, object and call
-- ARGV[7] busy wait      the answer when only a finishing download can free the slot
-- ARGV[8] idle ttl       seconds each key outlives what it holds
-- ARGV[9] rate           the slot's token bucket: starts per second ("" = no bucket)
-- ARGV[10] burst         the most tokens it holds (>= 1)
-- ARGV[11] threshold     the slot's circuit breaker: failures in a row that open it
--                        ("" = no breaker); ARGV[12] its pause (seconds); ARGV[13] probes
-- ARGV[14] throttle      AutoThrottle's first delay for the slot ("" = not throttled):
--                        the delay is then the larger of ARGV[4] (the slot's floor: its
--                        configured delay, Crawl-delay) and the shared `tdelay`, which
--                        slot_release.lua moves with every worker's latency samples
-- ARGV[15] rules         robots.txt, when the caller obeys it: "known" (ARGV[4] holds
--                        its Crawl-delay: kept as the slot's `floor`), "blind" (the
--                        caller has not read it yet: its delay is at least the `floor`
--                        another worker left, and with none the slot takes one download
--                        at a time, since its first start may come only once robots.txt
--                        is read), or "" (not obeyed)
-- Returns "0" when the permit is granted (and recorded), else the seconds to wait before
-- trying again; a string, since Redis truncates a Lua number reply to an integer.
--
-- Every time is Redis's (NOW): a worker whose clock runs ahead cannot see another's
-- permits lapse early, nor its delays end early. A permit scored +inf (never lapsing)
-- or a pace that is not a finite number was not written by a worker: it is dropped.
--
-- The slot's bucket is one for the whole cluster, taken in this same call as the permit:
-- workers joining or dying do not change its rate, and it starts full (the burst holds
-- for the cluster from the first request). The same rule as scheduler/_tokenbucket.py.
-- So is its circuit breaker (scheduler/_breaker.py's rule; slot_release.lua counts the
-- failures): open, no worker starts the slot until the pause is over; half-open, the
-- cluster sends `probes` downloads, and a new round after a pause without an answer.

local K_PERMITS, K_PACE = KEYS[1], KEYS[2]
local concurrency = tonumber(ARGV[3])
local delay = tonumber(ARGV[4])
local expiry = NOW + tonumber(ARGV[5])
local busy_wait = tonumber(ARGV[7])
local idle_ttl = tonumber(ARGV[8])
local rate, burst = tonumber(ARGV[9]), tonumber(ARGV[10])
local throttle_start = tonumber(ARGV[14])
if throttle_start then
  local shared = stored_number(redis.call('HGET', K_PACE, 'tdelay'))
  delay = math.max(delay, shared or throttle_start)
end
local rules = ARGV[15] or ''
if rules == 'blind' then
  local floor = stored_number(redis.call('HGET', K_PACE, 'floor'))
  if floor then
    delay = math.max(delay, floor)
  else
    concurrency = 1
  end
end

-- Milliseconds until `until_` plus the grace, at least 1.
local function ttl(until_)
  return math.max(1, math.ceil((until_ - NOW + idle_ttl) * 1000))
end

-- A worker that died holding a permit (SIGKILL, lost network) frees it here, once its
-- lease has run out: the slot never loses concurrency for longer than one lease.
redis.call('ZREMRANGEBYSCORE', K_PERMITS, '-inf', num(NOW))
redis.call('ZREMRANGEBYSCORE', K_PERMITS, '+inf', '+inf')

local pace = redis.call('HMGET', K_PACE, 'next', 'backoff', 'tokens', 'stamp')
local next_start, backoff = stored_number(pace[1]), stored_number(pace[2])
local tokens, stamp = stored_number(pace[3]), stored_number(pace[4])
if (pace[1] and not next_start) or (pace[2] and not backoff)
    or (pace[3] and not tokens) or (pace[4] and not stamp) then
  redis.call('DEL', K_PACE)
  next_start, backoff, tokens, stamp = nil, nil, nil, nil
end
next_start, backoff = next_start or 0, backoff or 0
local start_at = math.max(next_start, backoff)
if start_at > NOW then
  return num(start_at - NOW)
end

local threshold, pause, probes = tonumber(ARGV[11]), tonumber(ARGV[12]), tonumber(ARGV[13])
local probe, breaker_until = false, nil
if threshold then
  local b = redis.call('HMGET', K_PACE, 'bstate', 'bat', 'bsent')
  local bstate, bat, bsent = b[1], stored_number(b[2]) or 0, tonumber(b[3]) or 0
  if bstate == 'open' then
    if NOW < bat + pause then
      return num(bat + pause - NOW)
    end
    bstate, bat, bsent = 'half', NOW, 0 -- the pause is over: probes
    redis.call('HSET', K_PACE, 'bstate', 'half', 'bat', num(bat), 'bsent', 0, 'bfail', 0)
  end
  if bstate == 'half' then
    if bsent >= probes then
      if NOW < bat + pause then
        return num(bat + pause - NOW) -- every probe out: wait for their answers
      end
      bat = NOW -- no answer for a whole pause: a new round of probes
      redis.call('HSET', K_PACE, 'bat', num(bat), 'bsent', 0, 'bfail', 0)
    end
    probe, breaker_until = true, bat + pause
  end
end

if redis.call('ZCARD', K_PERMITS) >= concurrency then
  -- Only a release (or the earliest lease running out) can free a permit.
  local first = redis.call('ZRANGE', K_PERMITS, 0, 0, 'WITHSCORES')
  return num(math.min(busy_wait, tonumber(first[2]) - NOW))
end

-- The slot's bucket, brought up to NOW (the stamp never goes back).
if rate then
  tokens, stamp = refill(tokens, stamp, rate, burst)
  if tokens + EPSILON < 1 then
    if rate <= 0 or burst < 1 then
      return num(busy_wait * 20)  -- never: look again now and then (a new rate)
    end
    return num((1 - tokens) / rate)
  end
  tokens = math.max(0, tokens - 1)
end

redis.call('ZADD', K_PERMITS, num(expiry), ARGV[6])
local last = redis.call('ZRANGE', K_PERMITS, -1, -1, 'WITHSCORES')
redis.call('PEXPIRE', K_PERMITS, ttl(math.max(expiry, tonumber(last[2]))))

-- What the pace key holds, and until when it matters: a full bucket is as good as none.
local keep = 0
if backoff and backoff > 0 then
  redis.call('HDEL', K_PACE, 'backoff') -- over: forget it
end
if delay > 0 then
  redis.call('HSET', K_PACE, 'next', num(NOW + delay))
  keep = NOW + delay
elseif next_start and next_start > 0 then
  redis.call('HDEL', K_PACE, 'next') -- a slot without delay keeps no pace key
end
if rules == 'known' then
  redis.call('HSET', K_PACE, 'floor', num(delay))
  keep = math.max(keep, NOW)
end
if rate then
  redis.call('HSET', K_PACE, 'tokens', num(tokens), 'stamp', num(stamp))
  local full = NOW
  if rate > 0 then
    full = NOW + (burst - tokens) / rate
  end
  keep = math.max(keep, full)
end
if probe then
  redis.call('HINCRBY', K_PACE, 'bsent', 1)
  keep = math.max(keep, breaker_until)
end
if keep > 0 and redis.call('PTTL', K_PACE) < ttl(keep) then -- never cut a failure count short
  redis.call('PEXPIRE', K_PACE, ttl(keep))
end
return '0'
