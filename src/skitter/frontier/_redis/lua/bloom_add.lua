-- bloom_add.lua: add fingerprints to the Bloom filter, or look them up
-- (RedisBloomFilter.add_many, RedisBloomFilter.contains_many). _bloom.lua comes first.
--
-- KEYS[1]     bloom   hash: bits, hashes, block (the filter's shape), count (added)
-- KEYS[1 + b] block b of the bitmap (a string of `block` bits; the last one shorter)
-- ARGV[1]     mode: "add", "check" or "shape" (only fix or check the shape)
-- ARGV[2]     bits    m, the size of the whole filter
-- ARGV[3]     hashes  k, the bit positions per fingerprint
-- ARGV[4]     block   bits per block key
-- ARGV[4 + j] fingerprint j
-- Returns one integer per fingerprint: for "add", 1 if it was new (some bit was still
-- 0: a duplicate earlier in the same batch counts as seen); for "check", 1 if it may be
-- present (all bits set).

local K_BLOOM = KEYS[1]
local mode = ARGV[1]
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
elseif mode ~= 'check' then
  redis.call('HSET', K_BLOOM, 'bits', ARGV[2], 'hashes', ARGV[3], 'block', ARGV[4])
end

local out = {}
local added = 0
local add = mode == 'add'
for j = 5, #ARGV do
  local hit = bloom_bits(2, m, k, block, ARGV[j], add)
  if add then
    out[#out + 1] = 1 - hit
    added = added + 1 - hit
  else
    out[#out + 1] = hit
  end
end
if added > 0 then
  redis.call('HINCRBY', K_BLOOM, 'count', added)
end
return out
