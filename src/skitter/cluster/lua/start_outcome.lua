-- start_outcome.lua: record how one of the job's start requests ended
-- (StartClaim.accepted, StartClaim.refused), before its task is settled.
--
-- KEYS[1] meta        the job's meta hash (its epoch)
-- KEYS[2] progress    hash: offset, done; and what this script writes: accepted (1 once
--                     any start request got a response the spider accepted), refused (how
--                     many did not), refused:N (the Nth refused: its URL and reason, JSON)
-- ARGV[1] epoch       the job's, as the caller joined it
-- ARGV[2] "accepted" or "refused"
-- ARGV[3] for refused: the JSON [url, reason] to keep
-- ARGV[4] for refused: how many refused ones to keep
-- Returns the number of refused ones so far (1 for accepted).

local K_META, K_PROGRESS = KEYS[1], KEYS[2]
local epoch = redis.call('HGET', K_META, 'epoch')
if not epoch then
  return redis.error_reply('skitter-lost: no epoch')
elseif epoch ~= ARGV[1] then
  return redis.error_reply('skitter-lost: a new epoch')
end
if ARGV[2] == 'accepted' then
  redis.call('HSET', K_PROGRESS, 'accepted', 1)
  return 1
end
local refused = redis.call('HINCRBY', K_PROGRESS, 'refused', 1)
if refused <= tonumber(ARGV[4]) then
  redis.call('HSET', K_PROGRESS, 'refused:' .. refused, ARGV[3])
end
return refused
