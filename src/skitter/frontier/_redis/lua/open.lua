-- open.lua: join the job, or create it (RedisFrontier.open_job).
--
-- KEYS: the eleven keys of _common.lua.
-- ARGV[1..5]: the header of _common.lua (ARGV[4], the epoch, is not read here; the
--             kind may be "": the job's own, priority for a new one)
-- ARGV[6] create: "1" to create the job when it has no epoch, "0" not to
-- ARGV[7] epoch: a fresh random token, the job's epoch if this call creates it
-- ARGV[8] format version of the payloads (kept in meta, for readers of the store)
-- Returns: {epoch, how, kind} where how is "joined" (the job has an epoch), "created" (it
-- had none, nor anything queued or finished), "adopted" (it had queued or finished tasks
-- but no epoch: a job of an older skitter) or "absent" (epoch "": none, not created),
-- and kind is the job's queue kind.
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
if epoch then
  redis.call('PERSIST', K_META)
  return {epoch, 'joined', kind}
end
if ARGV[ARG0 + 1] ~= '1' then
  return {'', 'absent', kind}
end
local how = 'created'
if redis.call('EXISTS', K_TASKS, K_DONE, K_FAILED, K_BAD_TASKS) > 0
    or redis.call('HEXISTS', K_META, 'seq') == 1 then
  how = 'adopted'
end
epoch = ARGV[ARG0 + 2]
redis.call('HSET', K_META, 'epoch', epoch, 'kind', kind, 'version', ARGV[ARG0 + 3],
  'created', num(NOW))
return {epoch, how, kind}
