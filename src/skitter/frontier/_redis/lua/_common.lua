-- _common.lua: definitions shared by every script of the Redis frontier.
--
-- Not a script on its own: _scripts.py prepends _clock.lua, _bloom.lua and this file to
-- each script before registering it, so each EVALSHA is self-contained (no server-side
-- function library to install).
--
-- KEYS, the same eleven for every script, all under one hash tag so that one crawl's
-- keys live on one Redis Cluster shard (see skitter/redis/_keys.py for the full description):
--   KEYS[1] meta        hash: epoch, kind, version, seq, quarantined, bad_seq, bad_dropped
--   KEYS[2] tasks       hash: taskid -> record of a queued or processing task (msgpack)
--   KEYS[3] payloads    hash: taskid -> the encoded Request (opaque here)
--   KEYS[4] done        hash: taskid -> last outcome of a finished task (the dupe filter)
--   KEYS[5] ready       zset (score -priority, member ordered by seq) or list (fifo, lifo)
--   KEYS[6] delayed     zset: entry -> exetime
--   KEYS[7] processing  zset: entry -> lease deadline
--   KEYS[8] bad         hash: entry or taskid -> reason .. "\0" .. raw bytes moved aside
--   KEYS[9] failed      zset: taskid -> time it FAILED (its payload is kept for a retry)
--   KEYS[10] bad_tasks  zset: taskid -> time it was marked BAD (its payload is kept too)
--   KEYS[11] bad_order  zset: field of the bad hash -> its place (oldest dropped first)
--   KEYS[12] bloom      with REDIS_DUPEFILTER=bloom only: the Bloom filter's hash (its
--                       shape, written by RedisBloomFilter.fix_shape), and from KEYS[13]
--                       on the blocks of its bitmap
--
-- ARGV, the same five first for every script (the script's own start at ARG0 + 1):
--   ARGV[1] clock "redis" | "caller", ARGV[2] the caller's now (see _clock.lua)
--   ARGV[3] kind: "priority", "fifo" or "lifo"
--   ARGV[4] epoch: the job's, as the caller learned it (open.lua)
--   ARGV[5] bad_max: the most entries the bad hash keeps
--
-- An *entry* (the member of ready, delayed and processing) is the task's sequence number
-- as 16 hex digits followed by its taskid: equal scores sort by member, so the priority
-- zset is FIFO within a priority, and a merge or a reclaim puts a task back at its place.
--
-- The epoch is written once, when the job is created (open.lua). A script that finds it
-- missing (Redis restarted without persistence, FLUSHDB, eviction, failover to an empty
-- replica) or changed (the job was flushed and created again) changes nothing and
-- answers "skitter-lost: ...", which the frontier raises as JobStateLost: going on
-- would crawl from nothing and report success.

local K_META, K_TASKS, K_PAYLOADS, K_DONE = KEYS[1], KEYS[2], KEYS[3], KEYS[4]
local K_READY, K_DELAYED, K_PROCESSING, K_BAD = KEYS[5], KEYS[6], KEYS[7], KEYS[8]
local K_FAILED, K_BAD_TASKS, K_BAD_ORDER = KEYS[9], KEYS[10], KEYS[11]
local K_BLOOM = KEYS[12]  -- nil: the exact filter
local BLOOM_BLOCKS = 13  -- KEYS index of the Bloom filter's first block
local KIND, EPOCH, BAD_MAX = ARGV[3], ARGV[4], tonumber(ARGV[5])
local ARG0 = 5

-- Fields of a task record (a msgpack array).
local SEQ, PRIORITY, RETRIED, WHERE, WHEN, OWNER = 1, 2, 3, 4, 5, 6
local TOKEN, REASON, ITAG, AGE, AUTO, URL = 7, 8, 9, 10, 11, 12
local NFIELDS = 12
-- Values of record[WHERE]; record[WHEN] is the exetime while delayed, the deadline
-- while processing.
local READY, DELAYED, PROCESSING = 0, 1, 2
-- Task states (skitter.frontier.TaskState).
local SUCCESS, FAILED, BAD = 2, 3, 4
-- Lua numbers are doubles: integers beyond 2^53 lose their order.
local MAX_INT = 9007199254740991

-- Why the job's state is not the one the caller joined, or nil if it is.
local function job_lost()
  local epoch = redis.call('HGET', K_META, 'epoch')
  if not epoch then
    return 'skitter-lost: no epoch'
  elseif epoch ~= EPOCH then
    return 'skitter-lost: a new epoch'
  end
  return nil
end

local function entry_of(tid, rec)
  return string.format('%016x', rec[SEQ]) .. tid
end

local function taskid_of(entry)
  return string.sub(entry, 17)
end

-- What is wrong with a decoded task record, or nil if nothing is.
local function record_problem(rec)
  if type(rec) ~= 'table' or #rec ~= NFIELDS then
    return 'not a task record'
  elseif not int_in(rec[SEQ], 0, MAX_INT) then
    return 'seq'
  elseif not int_in(rec[PRIORITY], -MAX_INT, MAX_INT) then
    return 'priority'
  elseif not int_in(rec[RETRIED], 0, 2147483647) then
    return 'retried'
  elseif rec[WHERE] ~= READY and rec[WHERE] ~= DELAYED and rec[WHERE] ~= PROCESSING then
    return 'where'
  elseif not finite(rec[WHEN]) then
    return 'when'
  elseif type(rec[OWNER]) ~= 'string' or type(rec[TOKEN]) ~= 'string' then
    return 'owner'
  elseif type(rec[REASON]) ~= 'string' or type(rec[URL]) ~= 'string' then
    return 'reason or url'
  elseif rec[ITAG] ~= false and type(rec[ITAG]) ~= 'string' then
    return 'itag'
  elseif not finite(rec[AGE]) then
    return 'age'
  elseif type(rec[AUTO]) ~= 'boolean' then
    return 'auto_recrawl'
  end
  return nil
end

-- The record of tid: a table; nil when there is none; false, its bytes and what is
-- wrong with it when it cannot be used.
local function load(tid)
  local raw = redis.call('HGET', K_TASKS, tid)
  if not raw then
    return nil
  end
  local ok, rec = pcall(cmsgpack.unpack, raw)
  if not ok then
    return false, raw, 'unreadable task record'
  end
  local problem = record_problem(rec)
  if problem then
    return false, raw, 'invalid task record (' .. problem .. ')'
  end
  return rec, raw
end

local function save(tid, rec)
  redis.call('HSET', K_TASKS, tid, cmsgpack.pack(rec))
end

-- What each call moved aside: flat {field, reason, ...}, returned to the caller, which
-- counts it and warns.
local ASIDE = {}

-- Keep what cannot be used, with the reason, for a human to look at; never run it. The
-- bad hash keeps the newest BAD_MAX entries: older ones are dropped and counted.
local function move_aside(field, reason, raw)
  reason = string.gsub(reason, '%z', ' ')
  redis.call('HSET', K_BAD, field, num(NOW) .. ' ' .. reason .. '\0' .. (raw or ''))
  redis.call('ZADD', K_BAD_ORDER, redis.call('HINCRBY', K_META, 'bad_seq', 1), field)
  redis.call('HINCRBY', K_META, 'quarantined', 1)
  local over = redis.call('ZCARD', K_BAD_ORDER) - BAD_MAX
  if over > 0 then
    local oldest = redis.call('ZPOPMIN', K_BAD_ORDER, over)
    for i = 1, #oldest, 2 do
      redis.call('HDEL', K_BAD, oldest[i])
    end
    redis.call('HINCRBY', K_META, 'bad_dropped', #oldest / 2)
  end
  ASIDE[#ASIDE + 1] = field
  ASIDE[#ASIDE + 1] = reason
end

-- Forget a task whose record cannot be used, keeping its bytes in K_BAD.
local function quarantine_record(tid, raw, why)
  local payload = redis.call('HGET', K_PAYLOADS, tid) or ''
  move_aside(tid, why, raw .. '\0' .. payload)
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
    if not (int_in(bloom_m, 1, MAX_INT) and int_in(bloom_k, 1, 64)
        and int_in(bloom_block, 8, MAX_INT)) then
      error({err = 'skitter: the Bloom filter\'s shape is unreadable'})
    end
  end
  return bloom_bits(BLOOM_BLOCKS, bloom_m, bloom_k, bloom_block, tid, set)
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

-- The packed outcome of a finished task that is not a plain success, checked field by
-- field; nil if it is not one.
local function outcome_of(raw)
  local first = string.byte(raw, 1) or 0
  if first < 0x90 or first > 0x9f then
    return nil
  end
  local ok, t = pcall(cmsgpack.unpack, raw)
  if ok and type(t) == 'table' and #t == 9
      and (t[1] == SUCCESS or t[1] == FAILED or t[1] == BAD) and finite(t[2])
      and (t[3] == false or type(t[3]) == 'string') and int_in(t[4], 0, 2147483647)
      and type(t[5]) == 'string' and type(t[6]) == 'string'
      and int_in(t[7], -MAX_INT, MAX_INT) and finite(t[8]) and type(t[9]) == 'boolean' then
    return t
  end
  return nil
end

-- state, lastcrawltime, itag (false if none), exact of a finished task, or nil. exact is
-- false for a success known only to the Bloom filter: no time, no itag. An outcome that
-- cannot be read is moved aside: the task counts as never seen.
local function seen_get(tid)
  local raw = redis.call('HGET', K_DONE, tid)
  if not raw then
    if K_BLOOM and bloom(tid, false) == 1 then
      return SUCCESS, 0, false, false
    end
    return nil
  end
  local t = outcome_of(raw)
  if t then
    return t[1], t[2], t[3], true
  end
  local last = stored_number(raw)
  if last then
    return SUCCESS, last, false, true
  end
  move_aside(tid, 'unreadable finished record', raw)
  redis.call('HDEL', K_DONE, tid)
  unlist_finished(tid)
  return nil
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

-- The record of tid if it is processing under the lease with this token, else nil. The
-- token names the lease call, the taskid the task: together, one lease.
local function current(tid, token)
  local rec = load(tid)
  if not rec or rec[WHERE] ~= PROCESSING or rec[TOKEN] ~= token then
    return nil
  end
  return rec
end

-- End a task for good: it leaves every structure, its outcome goes to the dupe filter.
-- A FAILED or BAD task keeps its payload, for retry_failed and requeue_bad.
local function finish(tid, rec, state, now, reason, url)
  redis.call('ZREM', K_PROCESSING, entry_of(tid, rec))
  redis.call('HDEL', K_TASKS, tid)
  if state == SUCCESS then
    redis.call('HDEL', K_PAYLOADS, tid)
  end
  seen_put(tid, state, now, rec, reason, url)
end
