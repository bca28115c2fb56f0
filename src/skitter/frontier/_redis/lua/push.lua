-- push.lua: queue a batch of requests (Frontier.push), one outcome per request.
--
-- KEYS: the ten keys of _common.lua (meta, tasks, payloads, done, ready, delayed,
--       processing, bad, failed, bad_tasks).
-- ARGV[1] kind: "priority" | "fifo" | "lifo"
-- ARGV[2] now: epoch seconds
-- ARGV[3] batch: msgpack array of requests, each
--         {taskid, priority, exetime, itag or false, age, auto_recrawl, force, url}
-- ARGV[4] format version of the payloads (kept in meta, for readers of the store)
-- ARGV[4 + i] the payload (encoded request) of the i-th request: bytes travel as plain
--         arguments because Redis's cmsgpack cannot read msgpack's bin type
-- Returns: an array of PushOutcome values, 1 NEW, 2 MERGED, 3 RECRAWL, 4 IGNORED.
--
-- A queued taskid is merged (higher priority and earlier exetime win, except that a
-- task waiting for a retry keeps its retry time; the first request
-- is kept); a processing one is IGNORED (its running attempt stands for it); a finished
-- one is queued again only if forced, its age has passed or its itag changed.

local NEW, MERGED, RECRAWL, IGNORED = 1, 2, 3, 4

local stored_kind = redis.call('HGET', K_META, 'kind')
if not stored_kind then
  redis.call('HSET', K_META, 'kind', KIND, 'version', ARGV[4])
elseif stored_kind ~= KIND then
  return redis.error_reply('skitter: this job was created with queue kind "' .. stored_kind
    .. '", not "' .. KIND .. '"')
end

local now = tonumber(ARGV[2])
local batch = cmsgpack.unpack(ARGV[3])

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
  local tid, priority, exetime, itag, age = r[1], r[2], r[3], r[4], r[5]
  local rec, raw = load(tid)
  if rec == false then
    quarantine_record(tid, raw, now)
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
      redis.call('HSET', K_PAYLOADS, tid, ARGV[4 + i])
      enqueue(tid, next_seq(), priority, exetime, itag, age, r[6], r[8], now)
    end
    outcomes[i] = outcome
  end
end
return outcomes
