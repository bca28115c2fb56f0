-- mark_bad.lua: the task can never succeed (Frontier.mark_bad), or its stored request
-- could not be decoded (a malformed or malicious payload, a callback this code lacks,
-- a newer format) and must never run as it is.
--
-- KEYS: the eleven keys of _common.lua.
-- ARGV[1..5]: the header of _common.lua
-- ARGV[6] taskid
-- ARGV[7] token of the lease
-- ARGV[8] reason
-- ARGV[9] "1" to also copy the payload to the bad hash for inspection (a decode failure)
-- Returns: 1, or 0 when the lease is not current (nothing changes).
--
-- The payload stays in the payloads hash either way: requeue.lua queues the task again
-- once the code that reads it is fixed.

local lost = job_lost()
if lost then
  return redis.error_reply(lost)
end

local tid, reason = ARGV[ARG0 + 1], ARGV[ARG0 + 3]
local rec = current(tid, ARGV[ARG0 + 2])
if not rec then
  return 0
end
if ARGV[ARG0 + 4] == '1' then
  move_aside(tid, reason, redis.call('HGET', K_PAYLOADS, tid))
end
finish(tid, rec, BAD, NOW, reason, rec[URL])
return 1
