-- robots_claim.lua: robots.txt of one origin, shared by every worker of the job
-- (RedisRobotsCache.claim): its cached text, or the claim to fetch it, in one step, so
-- two workers never both fetch it while it is not cached.
--
-- KEYS[1] robots    string: "=" .. text (the rules), "-" (no rules), "?" (being fetched)
-- ARGV[1] lease ms  how long the claim lasts: a worker that dies fetching it frees it
-- Returns the stored value, or "" when the caller now holds the claim.

local value = redis.call('GET', KEYS[1])
if value then
  return value
end
redis.call('SET', KEYS[1], '?', 'PX', tonumber(ARGV[1]))
return ''
