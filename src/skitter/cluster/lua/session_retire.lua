-- session_retire.lua: retire a session for every worker of the job (a response of it
-- was a block): out of its scope, its jar deleted, and its id added to the list the
-- other workers read to stop using it.
--
-- KEYS[1] scope     hash: session id -> JSON record of each live session of the scope
-- KEYS[2] jars      hash: session id -> its cookie jar (JSON)
-- KEYS[3] gone      list: "id reason" of every retired session, oldest first
-- ARGV[1] id, ARGV[2] reason
-- Returns 1, or 0 if the session was out already (retired by another worker, or used up).

if redis.call('HDEL', KEYS[1], ARGV[1]) == 0 then
  return 0
end
redis.call('HDEL', KEYS[2], ARGV[1])
redis.call('RPUSH', KEYS[3], ARGV[1] .. ' ' .. ARGV[2])
return 1
