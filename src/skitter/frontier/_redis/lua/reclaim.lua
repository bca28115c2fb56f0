-- reclaim.lua: put tasks whose lease expired back in the ready queue
-- (Frontier.reclaim_expired). Any worker may run it: a dead worker's tasks come back.
--
-- KEYS: the eleven keys of _common.lua.
-- ARGV[1..5]: the header of _common.lua; a lease whose deadline is <= NOW has expired
-- ARGV[6] limit: most processing entries looked at by this call
-- Returns: {reclaimed, scanned, aside, now}; the caller calls again while scanned ==
-- limit. aside is flat {field, reason, ...} of what was moved to the bad hash; now is
-- NOW.
--
-- A reclaimed task keeps its place in the order and its retried count: the attempt did
-- not fail, the worker went away. Its owner and token are cleared, so the old lease's
-- ack is refused.
--
-- Redis sorted sets take infinite scores, which no deadline or exetime is: an entry of
-- the delayed or processing set scored +inf (never due, never expired: the job would
-- never finish) gets its score back from its record, or is dropped when stale.

local lost = job_lost()
if lost then
  return redis.error_reply(lost)
end

local limit = tonumber(ARGV[ARG0 + 1])
for _, key in ipairs({K_DELAYED, K_PROCESSING}) do
  for _, entry in ipairs(redis.call('ZRANGEBYSCORE', key, '+inf', '+inf', 'LIMIT', 0, limit)) do
    local tid = taskid_of(entry)
    local rec, raw, why = load(tid)
    local where = key == K_DELAYED and DELAYED or PROCESSING
    if rec and rec[WHERE] == where and entry_of(tid, rec) == entry then
      redis.call('ZADD', key, num(rec[WHEN]), entry)
    else
      redis.call('ZREM', key, entry)
      if rec == false then
        quarantine_record(tid, raw, why)
      end
    end
  end
end

local expired = redis.call('ZRANGEBYSCORE', K_PROCESSING, '-inf', num(NOW), 'LIMIT', 0, limit)
local reclaimed = 0
for _, entry in ipairs(expired) do
  redis.call('ZREM', K_PROCESSING, entry)
  local tid = taskid_of(entry)
  local rec, raw, why = load(tid)
  if rec and rec[WHERE] == PROCESSING and entry_of(tid, rec) == entry then
    make_ready(tid, rec, true)
    save(tid, rec)
    reclaimed = reclaimed + 1
  elseif rec == false then
    quarantine_record(tid, raw, why)
  end
end
return {reclaimed, #expired, ASIDE, num(NOW)}
