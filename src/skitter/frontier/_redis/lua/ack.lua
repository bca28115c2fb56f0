-- ack.lua: tasks succeeded (Frontier.ack), any number in one call.
--
-- KEYS: the eleven keys of _common.lua.
-- ARGV[1..5]: the header of _common.lua
-- ARGV[6 ..] three values per ack: when it succeeded (the caller's clock), taskid, and
--            the token of its lease
-- Returns: an array, per ack, of 1, or 0 when its lease is not current (then nothing
-- changes for that task).
--
-- SUCCESS is recorded in the dupe filter; an auto_recrawl task is queued again at
-- now + age, as a fresh task at the back (the memory frontier's push with force).

local lost = job_lost()
if lost then
  return redis.error_reply(lost)
end

local results = {}
for i = ARG0 + 1, #ARGV, 3 do
  local now, tid = tonumber(ARGV[i]) + SKEW, ARGV[i + 1]
  local rec = current(tid, ARGV[i + 2])
  if not rec then
    results[#results + 1] = 0
  else
    if rec[AUTO] and rec[AGE] >= 0 then
      -- keep the payload: the same request is queued again
      redis.call('ZREM', K_PROCESSING, entry_of(tid, rec))
      seen_put(tid, SUCCESS, now, rec, '', '')
      enqueue(tid, next_seq(), rec[PRIORITY], now + rec[AGE], rec[ITAG], rec[AGE], rec[AUTO],
        rec[URL], NOW)
    else
      finish(tid, rec, SUCCESS, now, '', '')
    end
    results[#results + 1] = 1
  end
end
return results
