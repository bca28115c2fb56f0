-- open.lua: join the job, or create it (RedisFrontier.open_job).
--
-- KEYS: the eleven keys of _common.lua.
-- ARGV[1..5]: the header of _common.lua (ARGV[4], the epoch, is not read here; the
--             kind may be "": the job's own, priority for a new one)
-- ARGV[6] create: "1" to create the job when it has no epoch, "0" not to
-- ARGV[7] epoch: a fresh random token, the job's epoch if this call creates it
-- ARGV[8] format version of the payloads (kept in meta, for readers of the store)
-- ARGV[9] shards: how many shards the job has (kept in meta when this call creates it;
--         a job without the field has 1), or "" for the job's own
-- Returns: {epoch, how, kind, shards} where how is "joined" (the job has an epoch), "created" (it
-- had none, nor anything queued or finished), "adopted" (it had queued or finished tasks
-- but no epoch: a job of an older skitter) or "absent" (epoch "": none, not created),
-- kind is the job's queue kind and shards its number of shards.
--
-- A job whose last worker cleared it (REDIS_PERSIST off) keeps its meta, with a TTL, so
-- that the workers still finishing do not take the cleared job for a lost one; a new
-- run joining it keeps it for good.

local epoch = redis.call('HGET', K_META, 'epoch')
local stored_kind = redis.call('HGET', K_META, 'kind')
local kind = KIND
if kind == '' then
  kind = stored_kind or 'priority'
end
if stored_kind and stored_kind ~= kind then
  return redis.error_reply('skitter: this job was created with queue kind "' .. stored_kind
    .. '", not "' .. KIND .. '"')
end
local shards = ARGV[ARG0 + 4]
local stored_shards = redis.call('HGET', K_META, 'shards') or (epoch and '1')
if shards == '' then
  shards = stored_shards or '1'
end
if stored_shards and stored_shards ~= shards then
  return redis.error_reply('skitter: this job was created with ' .. stored_shards
    .. ' shard(s), not ' .. shards .. ' (give every worker the same --shards, REDIS_SHARDS)')
end
if epoch then
  redis.call('PERSIST', K_META)
  return {epoch, 'joined', kind, shards}
end
if ARGV[ARG0 + 1] ~= '1' then
  return {'', 'absent', kind, shards}
end
local how = 'created'
if redis.call('EXISTS', K_TASKS, K_DONE, K_FAILED, K_BAD_TASKS) > 0
    or redis.call('HEXISTS', K_META, 'seq') == 1 then
  how = 'adopted'
end
epoch = ARGV[ARG0 + 2]
redis.call('HSET', K_META, 'epoch', epoch, 'kind', kind, 'version', ARGV[ARG0 + 3],
  'created', num(NOW), 'shards', shards)
return {epoch, how, kind, shards}
