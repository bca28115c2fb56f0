-- push.lua: queue a batch of requests (Frontier.push), one outcome per request.
--
-- KEYS: the eleven keys of _common.lua.
-- ARGV[1..5]: the header of _common.lua
-- ARGV[6] batch: msgpack array of requests, each
--         {taskid, priority, exetime, itag or false, age, auto_recrawl, force, url}
--         (exetime on the caller's clock: moved by SKEW)
-- ARGV[6 + i] the payload (encoded request) of the i-th request: bytes travel as plain
--         arguments because Redis's cmsgpack cannot read msgpack's bin type
-- Returns: {outcomes, aside}: an array of PushOutcome values (1 NEW, 2 MERGED,
-- 3 RECRAWL, 4 IGNORED), and flat {field, reason, ...} of what was moved aside.
--
-- A queued taskid is merged (higher priority and earlier exetime win, except that a
-- task waiting for a retry keeps its retry time; the first request
-- is kept); a processing one is IGNORED (its running attempt stands for it); a finished
-- one is queued again only if forced, its age has passed or its itag changed.

local lost = job_lost()
if lost then
  return redis.error_reply(lost)
end

local NEW, MERGED, RECRAWL, IGNORED = 1, 2, 3, 4
local now = NOW
local batch = cmsgpack.unpack(ARGV[ARG0 + 1])

local function merge(tid, rec, priority, exetime)
  if rec[WHERE] == PROCESSING then
    return IGNORED
  end
  local changed = false
  if priority > rec[PRIORITY] then
    rec[PRIORITY] = priority
    changed = true
    if rec[WHERE] == READY and KIND == 'priority' then
      redis.call('ZADD', K_READY, num(-priority), entry_of(tid, rec))
    end
  end
  -- a task waiting for a retry keeps its back-off, whoever links to it again
  if rec[WHERE] == DELAYED and rec[RETRIED] == 0 and exetime < rec[WHEN] then
    changed = true
    if exetime <= now then
      redis.call('ZREM', K_DELAYED, entry_of(tid, rec))
      make_ready(tid, rec, false)
    else
      rec[WHEN] = exetime
      redis.call('ZADD', K_DELAYED, num(exetime), entry_of(tid, rec))
    end
  end
  if changed then
    save(tid, rec)
  end
  return MERGED
end

local outcomes = {}
for i, r in ipairs(batch) do
  local tid, priority, exetime, itag, age = r[1], r[2], r[3] + SKEW, r[4], r[5]
  local rec, raw, why = load(tid)
  if rec == false then
    quarantine_record(tid, raw, why)
    rec = nil
  end
  if rec then
    outcomes[i] = merge(tid, rec, priority, exetime)
  else
    local outcome = NEW
    local state, last, old_itag, exact = seen_get(tid)
    if state then
      outcome = RECRAWL
      if not r[7] and not recrawl_due(itag, age, now, last, old_itag, exact) then
        outcome = IGNORED
      end
    end
    if outcome == RECRAWL then
      unlist_finished(tid)
    end
    if outcome ~= IGNORED then
      redis.call('HSET', K_PAYLOADS, tid, ARGV[ARG0 + 1 + i])
      enqueue(tid, next_seq(), priority, exetime, itag, age, r[6], r[8], now)
    end
    outcomes[i] = outcome
  end
end
return {outcomes, ASIDE}
