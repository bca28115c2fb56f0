-- lease.lua: hand out up to `limit` due tasks, best first (Frontier.lease).
--
-- KEYS: the eleven keys of _common.lua.
-- ARGV[1..5]: the header of _common.lua
-- ARGV[6] lease seconds: each lease lasts until NOW + this
-- ARGV[7] limit: most tasks to lease
-- ARGV[8] owner: the worker's id (shown to people; fences nothing)
-- ARGV[9] token: unique to this call; ack, nack, renew and mark_bad must present it
-- ARGV[10] promote_limit: most due delayed tasks moved to ready by this call
-- Returns: {leases, aside, now} where leases is flat {taskid, retried, priority, payload,
--          ...}, aside is flat {field, reason, ...} for what was moved to the bad hash,
--          and now is NOW (the caller learns how far its clock is from Redis's).
--
-- Due delayed tasks move to ready first (earliest exetime first, at most promote_limit,
-- so that one call never blocks Redis for long after a long pause). An entry without a
-- usable record or payload is moved aside, never handed out; a stale entry (its record
-- says the task is elsewhere) is dropped. Entries with any score, infinite included,
-- are handled so: nothing in a queue can stop a lease.

local lost = job_lost()
if lost then
  return redis.error_reply(lost)
end

local deadline = NOW + tonumber(ARGV[ARG0 + 1])
local limit, owner, token = tonumber(ARGV[ARG0 + 2]), ARGV[ARG0 + 3], ARGV[ARG0 + 4]

local due = redis.call('ZRANGEBYSCORE', K_DELAYED, '-inf', num(NOW), 'LIMIT', 0,
  tonumber(ARGV[ARG0 + 5]))
for _, entry in ipairs(due) do
  redis.call('ZREM', K_DELAYED, entry)
  local tid = taskid_of(entry)
  local rec, raw, why = load(tid)
  if rec and rec[WHERE] == DELAYED and entry_of(tid, rec) == entry then
    make_ready(tid, rec, false)
    save(tid, rec)
  elseif rec == false then
    quarantine_record(tid, raw, why)
  end
end

local leases = {}
local got = 0
while got < limit do
  local entries = pop_ready(limit - got)
  if #entries == 0 then
    break
  end
  for _, entry in ipairs(entries) do
    local tid = taskid_of(entry)
    local rec, raw, why = load(tid)
    local payload = rec and redis.call('HGET', K_PAYLOADS, tid)
    if rec == nil then
      move_aside(entry, 'queue entry without a task record', '')
    elseif rec == false then
      quarantine_record(tid, raw, why)
    elseif rec[WHERE] ~= READY or entry_of(tid, rec) ~= entry then
      -- stale: the task moved on (it is queued under its current entry elsewhere)
    elseif not payload then
      move_aside(tid, 'task without a payload', raw)
      redis.call('HDEL', K_TASKS, tid)
    else
      rec[WHERE], rec[WHEN], rec[OWNER], rec[TOKEN] = PROCESSING, deadline, owner, token
      save(tid, rec)
      redis.call('ZADD', K_PROCESSING, num(deadline), entry)
      leases[#leases + 1] = tid
      leases[#leases + 1] = rec[RETRIED]
      leases[#leases + 1] = num(rec[PRIORITY])
      leases[#leases + 1] = payload
      got = got + 1
    end
  end
end
return {leases, ASIDE, num(NOW)}
