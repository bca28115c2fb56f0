-- _bucket.lua: a token bucket brought up to NOW, for the project's and a slot's bucket.
--
-- Not a script on its own: prepended (after _clock.lua) to bucket_take.lua and
-- slot_acquire.lua, so both buckets earn tokens by one rule.

-- Tokens short of a whole one by less than this count as one (float sums drift).
local EPSILON = 1e-9

-- tokens, stamp as stored (nil or negative: none yet, or forgotten once full: start
-- full); the stamp never goes back, so time can only earn tokens once.
local function refill(tokens, stamp, rate, burst)
  if not tokens or not stamp or tokens < 0 then
    tokens, stamp = burst, NOW
  end
  if NOW > stamp then
    tokens = tokens + (NOW - stamp) * rate
    stamp = NOW
  end
  return math.min(tokens, burst), stamp
end
