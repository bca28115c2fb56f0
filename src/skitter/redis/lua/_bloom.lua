-- _bloom.lua: the Bloom filter's bit positions, shared by bloom_add.lua and, with
-- REDIS_DUPEFILTER=bloom, the frontier's scripts (_scripts.py and _lua.py prepend it).
--
-- A fingerprint's k positions in a filter of m bits come from its SHA-1 (Redis's own
-- redis.sha1hex, so no caller computes them): h1 and h2 are its first two 52-bit parts,
-- reduced mod m, and the positions follow by enhanced double hashing (Dillinger &
-- Manolios): x = h1, y = h2; each step takes x, then x += y, y += i (mod m). Every value
-- stays below 2^53, so Lua's doubles compute them exactly. The bitmap is split into
-- blocks of `block` bits, one key each: position x is bit x % block of key
-- KEYS[first_block + floor(x / block)].

-- 1 if every position of fp is set (with set = true: sets them, and answers whether all
-- were set before), else 0.
local function bloom_bits(first_block, m, k, block, fp, set)
  local hex = redis.sha1hex(fp)
  local x = tonumber(string.sub(hex, 1, 13), 16) % m
  local y = tonumber(string.sub(hex, 14, 26), 16) % m
  if y == 0 then
    y = 1  -- a zero step would put all k positions on one bit
  end
  local hit = 1
  for i = 1, k do
    local b = math.floor(x / block)
    local key, offset = KEYS[first_block + b], x - b * block
    if set then
      if redis.call('SETBIT', key, offset, 1) == 0 then
        hit = 0
      end
    elseif redis.call('GETBIT', key, offset) == 0 then
      return 0
    end
    x = (x + y) % m
    y = (y + i) % m
  end
  return hit
end
