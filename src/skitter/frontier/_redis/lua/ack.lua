-- ack.lua: the task succeeded (Frontier.ack).
--
-- KEYS: the ten keys of _common.lua (meta, tasks, payloads, done, ready, delayed,
--       processing, bad, failed, bad_tasks).
-- ARGV[1] kind: "priority" | "fifo" | "lifo"
-- ARGV[2] now: epoch seconds
-- ARGV[3] taskid
-- ARGV[4] owner
-- ARGV[5] token of the lease
-- Returns: 1, or 0 when the lease is not current (nothing changes).
--
-- SUCCESS is recorded in the dupe filter; an auto_recrawl task is queued again at
-- now + age, as a fresh task at the back (the memory frontier's push with force).

local now, tid = tonumber(ARGV[2]), ARGV[3]
local rec = current(tid, ARGV[4], ARGV[5])
if not rec then
  return 0
end
local auto = rec[AUTO] and rec[AGE] >= 0
if auto then
  -- keep the payload: the same request is queued again
  redis.call('ZREM', K_PROCESSING, entry_of(tid, rec))
  seen_put(tid, SUCCESS, now, rec, '', '')
  enqueue(tid, next_seq(), rec[PRIORITY], now + rec[AGE], rec[ITAG], rec[AGE], rec[AUTO],
    rec[URL], now)
else
  finish(tid, rec, SUCCESS, now, '', '')
end
return 1
