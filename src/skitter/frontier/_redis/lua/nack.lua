-- nack.lua: the attempt failed (Frontier.nack).
--
-- KEYS: the eleven keys of _common.lua.
-- ARGV[1..5]: the header of _common.lua
-- ARGV[6] taskid
-- ARGV[7] token of the lease
-- ARGV[8] retry_at: epoch seconds on the caller's clock, or "" for no retry (FAILED)
-- ARGV[9] reason
-- Returns: 1, or 0 when the lease is not current (nothing changes).
--
-- With a retry time the task is queued again with retried + 1: delayed if retry_at is
-- in the future, else ready at its old place. Without one it is FAILED with the reason.

local lost = job_lost()
if lost then
  return redis.error_reply(lost)
end

local tid, reason = ARGV[ARG0 + 1], ARGV[ARG0 + 4]
local rec = current(tid, ARGV[ARG0 + 2])
if not rec then
  return 0
end
if ARGV[ARG0 + 3] == '' then
  finish(tid, rec, FAILED, NOW, reason, rec[URL])
  return 1
end
local retry_at = tonumber(ARGV[ARG0 + 3]) + SKEW
redis.call('ZREM', K_PROCESSING, entry_of(tid, rec))
rec[RETRIED] = rec[RETRIED] + 1
rec[REASON] = reason
if retry_at > NOW then
  rec[WHERE], rec[WHEN], rec[OWNER], rec[TOKEN] = DELAYED, retry_at, '', ''
  redis.call('ZADD', K_DELAYED, num(retry_at), entry_of(tid, rec))
else
  make_ready(tid, rec, true)
end
save(tid, rec)
return 1
