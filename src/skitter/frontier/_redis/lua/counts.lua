-- counts.lua: tasks ready (due), delayed (not yet due) and processing (Frontier.counts).
--
-- KEYS: the ten keys of _common.lua (meta, tasks, payloads, done, ready, delayed,
--       processing, bad, failed, bad_tasks).
-- ARGV[1] kind: "priority" | "fifo" | "lifo"
-- ARGV[2] now: epoch seconds
-- Returns: {ready, delayed, processing}
--
-- Read-only: a delayed task that is due counts as ready without being moved (the next
-- lease moves it), so counts can be asked as often as a dashboard likes.

local due = redis.call('ZCOUNT', K_DELAYED, '-inf', ARGV[2])
local later = redis.call('ZCOUNT', K_DELAYED, '(' .. ARGV[2], '+inf')
return {ready_count() + due, later, redis.call('ZCARD', K_PROCESSING)}
