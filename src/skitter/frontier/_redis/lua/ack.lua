-- ack.lua: tasks succeeded (Frontier.ack), any number in one call.
--
-- KEYS: the ten keys of _common.lua (meta, tasks, payloads, done, ready, delayed,
--       processing, bad, failed, bad_tasks).
-- ARGV[1] kind: "priority" | "fifo" | "lifo"
-- ARGV[2 ..] four values per ack: now (epoch seconds), taskid, owner, token of the lease
-- Returns: an array, per ack, of 1, or 0 when its lease is not current (then nothing
-- changes for that task).
--
-- SUCCESS is recorded in the dupe filter; an auto_recrawl task is queued again at
-- now + age, as a fresh task at the back (the memory frontier's push with force).

local results = {}
for i = 2, #ARGV, 4 do
  local now, tid = tonumber(ARGV[i]), ARGV[i + 1]
  local rec = current(tid, ARGV[i + 2], ARGV[i + 3])
  if not rec then
    results[#results + 1] = 0
  else
    if rec[AUTO] and rec[AGE] >= 0 then
      -- keep the payload: the same request is queued again
      redis.call('ZREM', K_PROCESSING, entry_of(tid, rec))
      seen_put(tid, SUCCESS, now, rec, '', '')
      enqueue(tid, next_seq(), rec[PRIORITY], now + rec[AGE], rec[ITAG], rec[AGE], rec[AUTO],
        rec[URL], now)
    else
      finish(tid, rec, SUCCESS, now, '', '')
    end
    results[#results + 1] = 1
  end
end
return results
