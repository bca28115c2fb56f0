-- lease.lua: hand out up to `limit` due tasks, best first (Frontier.lease).
--
-- KEYS: the ten keys of _common.lua (meta, tasks, payloads, done, ready, delayed,
--       processing, bad, failed, bad_tasks).
-- ARGV[1] kind: "priority" | "fifo" | "lifo"
-- ARGV[2] now: epoch seconds
-- ARGV[3] deadline: now + lease seconds
-- ARGV[4] limit: most tasks to lease
-- ARGV[5] owner: the worker's id
-- ARGV[6] token: unique to this call; ack, nack and renew must present it
-- ARGV[7] promote_limit: most due delayed tasks moved to ready by this call
-- Returns: {leases, aside} where leases is flat {taskid, retried, priority, payload, ...}
--          and aside is flat {entry, reason, ...} for entries moved to the bad hash.
--
-- Due delayed tasks move to ready first (earliest exetime first, at most promote_limit,
-- so that one call never blocks Redis for long after a long pause). An entry without a
-- readable record or payload is moved aside, never handed out; a stale entry (its record
-- says the task is elsewhere) is dropped.

local now, deadline = tonumber(ARGV[2]), ARGV[3]
local limit, owner, token = tonumber(ARGV[4]), ARGV[5], ARGV[6]
local deadline_n = tonumber(deadline)

local due = redis.call('ZRANGEBYSCORE', K_DELAYED, '-inf', ARGV[2], 'LIMIT', 0,
  tonumber(ARGV[7]))
for _, entry in ipairs(due) do
  redis.call('ZREM', K_DELAYED, entry)
  local tid = taskid_of(entry)
  local rec, raw = load(tid)
  if rec and rec[WHERE] == DELAYED and entry_of(tid, rec) == entry then
    make_ready(tid, rec, false)
    save(tid, rec)
  elseif rec == false then
    quarantine_record(tid, raw, now)
  end
end

local leases, aside = {}, {}
local got = 0
while got < limit do
  local entries = pop_ready(limit - got)
  if #entries == 0 then
    break
  end
  for _, entry in ipairs(entries) do
    local tid = taskid_of(entry)
    local rec, raw = load(tid)
    local payload = rec and redis.call('HGET', K_PAYLOADS, tid)
    if rec == nil then
      move_aside(entry, 'queue entry without a task record', '', now)
      aside[#aside + 1] = entry
      aside[#aside + 1] = 'queue entry without a task record'
    elseif rec == false then
      quarantine_record(tid, raw, now)
      aside[#aside + 1] = entry
      aside[#aside + 1] = 'unreadable task record'
    elseif rec[WHERE] ~= READY or entry_of(tid, rec) ~= entry then
      -- stale: the task moved on (it is queued under its current entry elsewhere)
    elseif not payload then
      move_aside(tid, 'task without a payload', raw, now)
      redis.call('HDEL', K_TASKS, tid)
      aside[#aside + 1] = entry
      aside[#aside + 1] = 'task without a payload'
    else
      rec[WHERE], rec[WHEN], rec[OWNER], rec[TOKEN] = PROCESSING, deadline_n, owner, token
      save(tid, rec)
      redis.call('ZADD', K_PROCESSING, deadline, entry)
      leases[#leases + 1] = tid
      leases[#leases + 1] = rec[RETRIED]
      leases[#leases + 1] = num(rec[PRIORITY])
      leases[#leases + 1] = payload
      got = got + 1
    end
  end
end
return {leases, aside}
