-- counts.lua: tasks ready (due), delayed (not yet due) and processing (Frontier.counts).
--
-- KEYS: the eleven keys of _common.lua.
-- ARGV[1..5]: the header of _common.lua
-- Returns: {ready, delayed, processing}
--
-- Read-only: a delayed task that is due counts as ready without being moved (the next
-- lease moves it), so counts can be asked as often as a dashboard likes. It checks the
-- epoch too: zero everywhere is how a worker decides the crawl is over, and a job whose
-- state vanished must not look finished.

local lost = job_lost()
if lost then
  return redis.error_reply(lost)
end

local due = redis.call('ZCOUNT', K_DELAYED, '-inf', num(NOW))
local later = redis.call('ZCOUNT', K_DELAYED, '(' .. num(NOW), '+inf')
return {ready_count() + due, later, redis.call('ZCARD', K_PROCESSING)}
