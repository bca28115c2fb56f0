-- session_save.lua: what a worker learnt of a live session, for the others: its proxy
-- (the proxy pool's index, never a URL) and its cookie jar, with a new version of the
-- jar so that the next lease of the session by another worker brings it along.
--
-- KEYS[1] scope     hash: session id -> JSON record of each live session of the scope
-- KEYS[2] jars      hash: session id -> its cookie jar (JSON)
-- ARGV[1] id
-- ARGV[2] proxy     the proxy pool's index, or "" (unchanged)
-- ARGV[3] jar       the jar (JSON), or "" (unchanged)
-- Returns the jar's version, or -1 if the session is no longer live (nothing is kept).

local raw = redis.call('HGET', KEYS[1], ARGV[1])
if not raw then
  return -1
end
local record = cjson.decode(raw)
if ARGV[2] ~= '' then
  record.proxy = tonumber(ARGV[2])
end
if ARGV[3] ~= '' then
  record.jar = record.jar + 1
  redis.call('HSET', KEYS[2], ARGV[1], ARGV[3])
end
redis.call('HSET', KEYS[1], ARGV[1], cjson.encode(record))
return record.jar
