-- nack.lua: the attempt failed (Frontier.nack).
--
-- KEYS: the ten keys of _common.lua (meta, tasks, payloads, done, ready, delayed,
--       processing, bad, failed, bad_tasks).
-- ARGV[1] kind: "priority" | "fifo" | "lifo"
-- ARGV[2] now: epoch seconds
-- ARGV[3] taskid
-- ARGV[4] owner
-- ARGV[5] token of the lease
-- ARGV[6] retry_at: epoch seconds, or "" for no retry (FAILED)
-- ARGV[7] reason
-- Returns: 1, or 0 when the lease is not current (nothing changes).
--
-- With a retry time the task is queued again with retried + 1: delayed if retry_at is
-- in the future, else ready at its old place. Without one it is FAILED with the reason.

local now, tid, reason = tonumber(ARGV[2]), ARGV[3], ARGV[7]
local rec = current(tid, ARGV[4], ARGV[5])
if not rec then
  return 0
end
if ARGV[6] == '' then
  finish(tid, rec, FAILED, now, reason, rec[URL])
  return 1
end
local retry_at = tonumber(ARGV[6])
redis.call('ZREM', K_PROCESSING, entry_of(tid, rec))
rec[RETRIED] = rec[RETRIED] + 1
rec[REASON] = reason
if retry_at > now then
  rec[WHERE], rec[WHEN], rec[OWNER], rec[TOKEN] = DELAYED, retry_at, '', ''
  redis.call('ZADD', K_DELAYED, ARGV[6], entry_of(tid, rec))
else
  make_ready(tid, rec, true)
end
save(tid, rec)
return 1
