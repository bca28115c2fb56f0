-- reclaim.lua: put tasks whose lease expired back in the ready queue
-- (Frontier.reclaim_expired). Any worker may run it: a dead worker's tasks come back.
--
-- KEYS: the ten keys of _common.lua (meta, tasks, payloads, done, ready, delayed,
--       processing, bad, failed, bad_tasks).
-- ARGV[1] kind: "priority" | "fifo" | "lifo"
-- ARGV[2] now: epoch seconds; a lease whose deadline is <= now has expired
-- ARGV[3] limit: most processing entries looked at by this call
-- Returns: {reclaimed, scanned}; the caller calls again while scanned == limit.
--
-- A reclaimed task keeps its place in the order and its retried count: the attempt did
-- not fail, the worker went away. Its owner and token are cleared, so the old lease's
-- ack is refused.

local now = tonumber(ARGV[2])
local expired = redis.call('ZRANGEBYSCORE', K_PROCESSING, '-inf', ARGV[2], 'LIMIT', 0,
  tonumber(ARGV[3]))
local reclaimed = 0
for _, entry in ipairs(expired) do
  redis.call('ZREM', K_PROCESSING, entry)
  local tid = taskid_of(entry)
  local rec, raw = load(tid)
  if rec and rec[WHERE] == PROCESSING and entry_of(tid, rec) == entry then
    make_ready(tid, rec, true)
    save(tid, rec)
    reclaimed = reclaimed + 1
  elseif rec == false then
    quarantine_record(tid, raw, now)
  end
end
return {reclaimed, #expired}
