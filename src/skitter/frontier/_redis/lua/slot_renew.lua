-- slot_renew.lua: extend the leases of download permits still in use, for downloads
-- that take longer than a lease (RedisPoliteness.renew).
--
-- KEYS[i]     permits zset of the slot of the i-th permit (a key may repeat)
-- ARGV[1]     now       the caller's clock, epoch seconds
-- ARGV[2]     expiry    now + lease seconds
-- ARGV[3]     idle ttl  seconds the permits key outlives its last permit
-- ARGV[3 + i] the i-th permit id
-- Returns one integer per permit: 1 renewed, 0 lapsed (its lease had run out: the slot
-- may already have given it to someone else, so it is not brought back).

local now = tonumber(ARGV[1])
local expiry = tonumber(ARGV[2])
local idle_ttl = tonumber(ARGV[3])
local renewed = {}
for i, key in ipairs(KEYS) do
  local id = ARGV[3 + i]
  local score = tonumber(redis.call('ZSCORE', key, id))
  if score and score > now then
    redis.call('ZADD', key, 'XX', ARGV[2], id)
    local last = tonumber(redis.call('ZRANGE', key, -1, -1, 'WITHSCORES')[2])
    redis.call('PEXPIRE', key, math.max(1, math.ceil((last - now + idle_ttl) * 1000)))
    renewed[i] = 1
  else
    if score then
      redis.call('ZREM', key, id)
    end
    renewed[i] = 0
  end
end
return renewed
