-- mark_bad.lua: the task can never succeed (Frontier.mark_bad), or its stored request
-- could not be decoded (a malformed or malicious payload) and must never run.
--
-- KEYS: the ten keys of _common.lua (meta, tasks, payloads, done, ready, delayed,
--       processing, bad, failed, bad_tasks).
-- ARGV[1] kind: "priority" | "fifo" | "lifo"
-- ARGV[2] now: epoch seconds
-- ARGV[3] taskid
-- ARGV[4] owner
-- ARGV[5] token of the lease
-- ARGV[6] reason
-- ARGV[7] "1" to keep the payload in the bad hash for inspection (a decode failure)
-- Returns: 1, or 0 when the lease is not current (nothing changes).

local now, tid, reason = tonumber(ARGV[2]), ARGV[3], ARGV[6]
local rec = current(tid, ARGV[4], ARGV[5])
if not rec then
  return 0
end
if ARGV[7] == '1' then
  move_aside(tid, reason, redis.call('HGET', K_PAYLOADS, tid), now)
end
finish(tid, rec, BAD, now, reason, rec[URL])
return 1
