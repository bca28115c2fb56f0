-- requeue.lua: queue FAILED or BAD tasks again (Frontier.retry_failed, requeue_bad),
-- chosen by the caller.
--
-- KEYS: the eleven keys of _common.lua.
-- ARGV[1..5]: the header of _common.lua
-- ARGV[6] state: 3 (FAILED) or 4 (BAD)
-- ARGV[7..] taskids to queue again
-- Returns: {queued, stayed}: how many were queued, and how many are still in that state
-- but could not be (their payload is gone: BAD tasks of an older skitter), which stay
-- listed.
--
-- The caller picks the taskids (by domain or reason) from K_FAILED or K_BAD_TASKS; each
-- is checked here again, since another worker may have queued it meanwhile: it must
-- still be in that state, not queued, and have its payload. It is queued at the back,
-- due now, with retried reset and its priority, itag, age and auto_recrawl as they were.

local lost = job_lost()
if lost then
  return redis.error_reply(lost)
end

local state = tonumber(ARGV[ARG0 + 1])
local index = state == BAD and K_BAD_TASKS or K_FAILED
local queued, stayed = 0, 0
for i = ARG0 + 2, #ARGV do
  local tid = ARGV[i]
  local raw = redis.call('HGET', K_DONE, tid)
  local t = raw and redis.call('HEXISTS', K_TASKS, tid) == 0 and outcome_of(raw)
  if t and t[1] == state then
    if redis.call('HEXISTS', K_PAYLOADS, tid) == 1 then
      redis.call('ZREM', index, tid)
      enqueue(tid, next_seq(), t[7], NOW, t[3], t[8], t[9], t[6], NOW)
      queued = queued + 1
    else
      stayed = stayed + 1
    end
  else
    redis.call('ZREM', index, tid)  -- not a current task in that state: a stale entry
  end
end
return {queued, stayed}
