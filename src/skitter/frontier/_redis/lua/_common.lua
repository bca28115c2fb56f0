-- _common.lua: definitions shared by every script of the Redis frontier.
--
-- Not a script on its own: _scripts.py prepends it to each script before registering
-- it, so each EVALSHA is self-contained (no server-side function library to install).
--
-- KEYS, the same ten for every script, all under one hash tag so that one crawl's
-- keys live on one Redis Cluster shard (see _keys.py for the full description):
--   KEYS[1] meta        hash: kind, version, seq (the global FIFO sequence)
--   KEYS[2] tasks       hash: taskid -> record of a queued or processing task (msgpack)
--   KEYS[3] payloads    hash: taskid -> the encoded Request (opaque here)
--   KEYS[4] done        hash: taskid -> last outcome of a finished task (the dupe filter)
--   KEYS[5] ready       zset (score -priority, member ordered by seq) or list (fifo, lifo)
--   KEYS[6] delayed     zset: entry -> exetime
--   KEYS[7] processing  zset: entry -> lease deadline
--   KEYS[8] bad         hash: entry or taskid -> reason .. "\0" .. raw bytes moved aside
--   KEYS[9] failed      zset: taskid -> time it FAILED (its payload is kept for a retry)
--   KEYS[10] bad_tasks  zset: taskid -> time it was marked BAD
--   KEYS[11] bloom      with REDIS_DUPEFILTER=bloom only: the Bloom filter's hash (its
--                       shape, written by RedisBloomFilter.fix_shape), and from KEYS[12]
--                       on the blocks of its bitmap
-- ARGV[1] is always the queue kind: "priority", "fifo" or "lifo".
--
-- An *entry* (the member of ready, delayed and processing) is the task's sequence number
-- as 16 hex digits followed by its taskid: equal scores sort by member, so the priority
-- zset is FIFO within a priority, and a merge or a reclaim puts a task back at its place.
--
-- Times come from the caller's clock as ARGV (never Redis TIME), so tests drive them with
-- plain numbers and every worker's notion of "now" is its own injected clock.

local K_META, K_TASKS, K_PAYLOADS, K_DONE = KEYS[1], KEYS[2], KEYS[3], KEYS[4]
local K_READY, K_DELAYED, K_PROCESSING, K_BAD = KEYS[5], KEYS[6], KEYS[7], KEYS[8]
local K_FAILED, K_BAD_TASKS = KEYS[9], KEYS[10]
local K_BLOOM = KEYS[11]  -- nil: the exact filter
local KIND = ARGV[1]

-- Fields of a task record (a msgpack array).
local SEQ, PRIORITY, RETRIED, WHERE, WHEN, OWNER = 1, 2, 3, 4, 5, 6
local TOKEN, REASON, ITAG, AGE, AUTO, URL = 7, 8, 9, 10, 11, 12
local NFIELDS = 12
-- Values of record[WHERE]; record[WHEN] is the exetime while delayed, the deadline
-- while processing.
local READY, DELAYED, PROCESSING = 0, 1, 2
-- Task states (skitter.frontier.TaskState).
local SUCCESS, FAILED, BAD = 2, 3, 4

-- A number as Redis should see it: exact (Lua's own tostring keeps 14 digits only).
local function num(x)
  return string.format('%.17g', x)
end

local function entry_of(tid, rec)
  return string.format('%016x', rec[SEQ]) .. tid
end

local function taskid_of(entry)
  return string.sub(entry, 17)
end

-- The record of tid: a table, nil when there is none, false when it cannot be read.
local function load(tid)
  local raw = redis.call('HGET', K_TASKS, tid)
  if not raw then
    return nil, nil
  end
  local ok, rec = pcall(cmsgpack.unpack, raw)
  if ok and type(rec) == 'table' and #rec == NFIELDS and type(rec[SEQ]) == 'number'
      and type(rec[PRIORITY]) == 'number' and type(rec[RETRIED]) == 'number'
      and type(rec[WHERE]) == 'number' and type(rec[WHEN]) == 'number'
      and type(rec[OWNER]) == 'string' and type(rec[TOKEN]) == 'string'
      and type(rec[REASON]) == 'string' and type(rec[AGE]) == 'number'
      and type(rec[URL]) == 'string' then
    return rec, raw
  end
  return false, raw
end

local function save(tid, rec)
  redis.call('HSET', K_TASKS, tid, cmsgpack.pack(rec))
end

-- Keep what cannot be used, with the reason, for a human to look at; never run it.
local function move_aside(field, reason, raw, now)
  reason = string.gsub(reason, '%z', ' ')
  redis.call('HSET', K_BAD, field, num(now) .. ' ' .. reason .. '\0' .. (raw or ''))
end

-- Forget a task whose record is unreadable, keeping its bytes in K_BAD.
local function quarantine_record(tid, raw, now)
  local payload = redis.call('HGET', K_PAYLOADS, tid) or ''
  move_aside(tid, 'unreadable task record', raw .. '\0' .. payload, now)
  redis.call('HDEL', K_TASKS, tid)
  redis.call('HDEL', K_PAYLOADS, tid)
end

-- -- the ready queue ---------------------------------------------------------------------
-- front: the task goes back where it was (a reclaim, an immediate retry), not to the back.
local function make_ready(tid, rec, front)
  rec[WHERE], rec[WHEN], rec[OWNER], rec[TOKEN] = READY, 0, '', ''
  local entry = entry_of(tid, rec)
  if KIND == 'priority' then
    redis.call('ZADD', K_READY, num(-rec[PRIORITY]), entry)
  elseif KIND == 'fifo' and front then
    redis.call('LPUSH', K_READY, entry)
  else
    redis.call('RPUSH', K_READY, entry)
  end
end

local function pop_ready(n)
  if KIND == 'priority' then
    local flat = redis.call('ZPOPMIN', K_READY, n)
    local entries = {}
    for i = 1, #flat, 2 do
      entries[#entries + 1] = flat[i]
    end
    return entries
  end
  local popped
  if KIND == 'fifo' then
    popped = redis.call('LPOP', K_READY, n)
  else
    popped = redis.call('RPOP', K_READY, n)
  end
  return popped or {}
end

local function ready_count()
  if KIND == 'priority' then
    return redis.call('ZCARD', K_READY)
  end
  return redis.call('LLEN', K_READY)
end

-- -- the dupe filter: finished tasks ------------------------------------------------------
-- seen_put and seen_get are the only writers and readers of K_DONE and the Bloom filter.
--
-- Exact filter: a plain first-attempt success without itag (most tasks) is stored as its
-- lastcrawltime alone; anything else as msgpack {state, lastcrawltime, itag or false,
-- retried, reason, url, priority, age, auto_recrawl}, as the memory frontier does.
-- Bloom filter: a success only sets the task's bits (a few bits instead of ~100 bytes);
-- FAILED and BAD tasks keep their exact records, few as they are, for listing and retry.
-- FAILED and BAD tasks are also indexed by time (K_FAILED, K_BAD_TASKS).
local bloom_m, bloom_k, bloom_block

-- bloom_bits on this job's filter (see _bloom.lua); its shape is read once per call.
local function bloom(tid, set)
  if not bloom_m then
    local shape = redis.call('HMGET', K_BLOOM, 'bits', 'hashes', 'block')
    if not shape[1] then
      if not set then
        return 0  -- nothing was ever added
      end
      error({err = 'skitter: the Bloom filter has no shape (its keys were deleted?)'})
    end
    bloom_m, bloom_k, bloom_block = tonumber(shape[1]), tonumber(shape[2]), tonumber(shape[3])
  end
  return bloom_bits(12, bloom_m, bloom_k, bloom_block, tid, set)
end

local function seen_put(tid, state, now, rec, reason, url)
  if K_BLOOM and state == SUCCESS then
    if bloom(tid, true) == 0 then
      redis.call('HINCRBY', K_BLOOM, 'count', 1)
    end
    redis.call('HDEL', K_DONE, tid)  -- an earlier failure, now history
    return
  end
  local value
  if state == SUCCESS and rec[RETRIED] == 0 and not rec[ITAG] then
    value = num(now)
  else
    value = cmsgpack.pack({state, now, rec[ITAG] or false, rec[RETRIED], reason, url,
      rec[PRIORITY], rec[AGE], rec[AUTO]})
  end
  redis.call('HSET', K_DONE, tid, value)
  if state == FAILED then
    redis.call('ZADD', K_FAILED, num(now), tid)
  elseif state == BAD then
    redis.call('ZADD', K_BAD_TASKS, num(now), tid)
  end
end

-- A finished task is queued again: its last outcome stops being listed as current.
local function unlist_finished(tid)
  redis.call('ZREM', K_FAILED, tid)
  redis.call('ZREM', K_BAD_TASKS, tid)
end

-- state, lastcrawltime, itag (false if none), exact of a finished task, or nil. exact is
-- false for a success known only to the Bloom filter: no time, no itag.
local function seen_get(tid)
  local raw = redis.call('HGET', K_DONE, tid)
  if not raw then
    if K_BLOOM and bloom(tid, false) == 1 then
      return SUCCESS, 0, false, false
    end
    return nil
  end
  local first = string.byte(raw, 1) or 0
  if first >= 0x90 and first <= 0x9f then
    local ok, t = pcall(cmsgpack.unpack, raw)
    if ok and type(t) == 'table' and type(t[2]) == 'number' then
      return t[1], t[2], t[3] or false, true
    end
  end
  return SUCCESS, tonumber(raw) or 0, false, true
end

-- pyspider's rule: the incoming request's itag and age decide. The Bloom filter keeps
-- neither times nor itags: what it has seen is never due again (unless forced).
-- last, old_itag and exact are what seen_get said of the finished task.
local function recrawl_due(itag, age, now, last, old_itag, exact)
  if not exact then
    return false
  end
  if itag and itag ~= old_itag then
    return true
  end
  return age >= 0 and last + age <= now
end

-- -- transitions -------------------------------------------------------------------------
local function next_seq()
  return redis.call('HINCRBY', K_META, 'seq', 1)
end

-- Queue a task afresh (new, recrawled or auto-recrawled): a new place at the back.
local function enqueue(tid, seq, priority, exetime, itag, age, auto, url, now)
  local rec = {seq, priority, 0, READY, 0, '', '', '', itag or false, age, auto, url}
  if exetime > now then
    rec[WHERE], rec[WHEN] = DELAYED, exetime
    redis.call('ZADD', K_DELAYED, num(exetime), entry_of(tid, rec))
  else
    make_ready(tid, rec, false)
  end
  save(tid, rec)
end

-- The record of tid if it is processing under this owner's current lease, else nil.
local function current(tid, owner, token)
  local rec = load(tid)
  if not rec or rec[WHERE] ~= PROCESSING or rec[OWNER] ~= owner or rec[TOKEN] ~= token then
    return nil
  end
  return rec
end

-- End a task for good: it leaves every structure, its outcome goes to the dupe filter.
-- A FAILED task keeps its payload, for retry_failed.
local function finish(tid, rec, state, now, reason, url)
  redis.call('ZREM', K_PROCESSING, entry_of(tid, rec))
  redis.call('HDEL', K_TASKS, tid)
  if state ~= FAILED then
    redis.call('HDEL', K_PAYLOADS, tid)
  end
  seen_put(tid, state, now, rec, reason, url)
end
