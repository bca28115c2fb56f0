-- retry_failed.lua: queue FAILED tasks again (Frontier.retry_failed), chosen by the caller.
--
-- KEYS: the ten keys of _common.lua (meta, tasks, payloads, done, ready, delayed,
--       processing, bad, failed, bad_tasks).
-- ARGV[1] kind: "priority" | "fifo" | "lifo"
-- ARGV[2] now: epoch seconds
-- ARGV[3..] taskids to queue again
-- Returns: how many were queued.
--
-- The caller picks the taskids (by domain or reason) from K_FAILED; each is checked here
-- again, since another worker may have queued it meanwhile: it must still be FAILED, not
-- queued, and have its payload. It is queued at the back, due now, with retried reset
-- and its priority, itag, age and auto_recrawl as they were.

local now = tonumber(ARGV[2])
local queued = 0
for i = 3, #ARGV do
  local tid = ARGV[i]
  local raw = redis.call('HGET', K_DONE, tid)
  local ok, t = false, nil
  if raw and redis.call('HEXISTS', K_TASKS, tid) == 0
      and redis.call('HEXISTS', K_PAYLOADS, tid) == 1 then
    ok, t = pcall(cmsgpack.unpack, raw)
  end
  -- Either way it leaves the list: queued now, or not a current failure.
  redis.call('ZREM', K_FAILED, tid)
  if ok and type(t) == 'table' and t[1] == FAILED and type(t[7]) == 'number' then
    enqueue(tid, next_seq(), t[7], now, t[3], t[8], t[9], t[6], now)
    queued = queued + 1
  end
end
return queued
