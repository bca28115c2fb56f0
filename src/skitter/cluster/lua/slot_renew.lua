-- slot_renew.lua: extend the leases of download permits still in use, for downloads
-- that take longer than a lease (RedisPoliteness.renew). _clock.lua comes first.
--
-- KEYS[i]     permits zset of the slot of the i-th permit (a key may repeat)
-- ARGV[1] clock, ARGV[2] the caller's now (see _clock.lua)
-- ARGV[3]     lease seconds  a renewed permit lapses NOW + this
-- ARGV[4]     idle ttl       seconds the permits key outlives its last permit
-- ARGV[4 + i] the i-th permit id
-- Returns one integer per permit: 1 renewed, 0 lapsed (its lease had run out: the slot
-- may already have given it to someone else, so it is not brought back).

local expiry = NOW + tonumber(ARGV[3])
local idle_ttl = tonumber(ARGV[4])
local renewed = {}
for i, key in ipairs(KEYS) do
  local id = ARGV[4 + i]
  local score = tonumber(redis.call('ZSCORE', key, id))
  if score and score > NOW then
    redis.call('ZADD', key, 'XX', num(expiry), id)
    local last = tonumber(redis.call('ZRANGE', key, -1, -1, 'WITHSCORES')[2])
    if not finite(last) then
      last = expiry
    end
    redis.call('PEXPIRE', key, math.max(1, math.ceil((last - NOW + idle_ttl) * 1000)))
    renewed[i] = 1
  else
    if score then
      redis.call('ZREM', key, id)
    end
    renewed[i] = 0
  end
end
return renewed
