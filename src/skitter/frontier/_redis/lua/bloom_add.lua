-- bloom_add.lua: add fingerprints to the Bloom filter, or look them up
-- (RedisBloomFilter.add_many, RedisBloomFilter.contains_many).
--
-- KEYS[1]     bloom   hash: bits, hashes, block (the filter's shape), count (added)
-- KEYS[1 + b] block b of the bitmap (a string of `block` bits; the last one shorter)
-- ARGV[1]     mode: "add" or "check"
-- ARGV[2]     bits    m, the size of the whole filter
-- ARGV[3]     hashes  k, the bit positions per fingerprint
-- ARGV[4]     block   bits per block key
-- ARGV[4 + 2j - 1], ARGV[4 + 2j]: h1, h2 of fingerprint j, both already reduced mod m
-- Returns one integer per fingerprint: for "add", 1 if it was new (some bit was still
-- 0: a duplicate earlier in the same batch counts as seen); for "check", 1 if it may be
-- present (all bits set).
--
-- The k positions are enhanced double hashing (Dillinger & Manolios): x = h1, y = h2;
-- each step takes x, then x += y, y += i (mod m). Every value stays below m < 2^53, so
-- Lua's doubles compute them exactly.

local K_BLOOM = KEYS[1]
local add = ARGV[1] == 'add'
local m, k, block = tonumber(ARGV[2]), tonumber(ARGV[3]), tonumber(ARGV[4])

-- Two workers must agree on the shape, or their positions would mean nothing to each
-- other; the first to write fixes it.
local shape = redis.call('HMGET', K_BLOOM, 'bits', 'hashes', 'block')
if shape[1] then
  if shape[1] ~= ARGV[2] or shape[2] ~= ARGV[3] or shape[3] ~= ARGV[4] then
    return redis.error_reply(string.format(
      'skitter: this Bloom filter was created with bits=%s hashes=%s block=%s, '
      .. 'not bits=%s hashes=%s block=%s', shape[1], tostring(shape[2]),
      tostring(shape[3]), ARGV[2], ARGV[3], ARGV[4]))
  end
elseif add then
  redis.call('HSET', K_BLOOM, 'bits', ARGV[2], 'hashes', ARGV[3], 'block', ARGV[4])
end

local out = {}
local added = 0
for j = 1, (#ARGV - 4) / 2 do
  local x = tonumber(ARGV[3 + 2 * j])
  local y = tonumber(ARGV[4 + 2 * j])
  local hit = 1
  for i = 1, k do
    local b = math.floor(x / block)
    local key, offset = KEYS[2 + b], x - b * block
    if add then
      if redis.call('SETBIT', key, offset, 1) == 0 then
        hit = 0
      end
    elseif redis.call('GETBIT', key, offset) == 0 then
      hit = 0
      break
    end
    x = (x + y) % m
    y = (y + i) % m
  end
  if add then
    out[j] = 1 - hit
    added = added + 1 - hit
  else
    out[j] = hit
  end
end
if added > 0 then
  redis.call('HINCRBY', K_BLOOM, 'count', added)
end
return out
