-- start_progress.lua: record how far the start requests got, and renew the claim
-- (StartClaim.progress, StartClaim.finished).
--
-- KEYS[1] meta        the job's meta hash (its epoch)
-- KEYS[2] claim       string: the fencing token of the claim's holder
-- KEYS[3] progress    hash: offset, done
-- ARGV[1] epoch       the job's, as the caller joined it
-- ARGV[2] token       the caller's claim token
-- ARGV[3] lease ms    the claim's new lease
-- ARGV[4] offset      start requests queued so far
-- ARGV[5] "1" when they are all queued (the claim is then given up), else "0"
-- Returns 1, or 0 when the caller no longer holds the claim (it lapsed and another
-- worker took it over, or finished the start requests meanwhile): then nothing changes,
-- so a stale feeder can neither move the offset nor renew someone else's claim. A claim
-- that lapsed while nobody took it is the caller's again. The offset never moves back.

local K_META, K_CLAIM, K_PROGRESS = KEYS[1], KEYS[2], KEYS[3]
local epoch = redis.call('HGET', K_META, 'epoch')
if not epoch then
  return redis.error_reply('skitter-lost: no epoch')
elseif epoch ~= ARGV[1] then
  return redis.error_reply('skitter-lost: a new epoch')
end
local holder = redis.call('GET', K_CLAIM)
if holder ~= ARGV[2] then
  if holder or redis.call('HEXISTS', K_PROGRESS, 'done') == 1 then
    return 0
  end
  redis.call('SET', K_CLAIM, ARGV[2], 'PX', ARGV[3])  -- lapsed, and nobody took it
end
local offset = tonumber(ARGV[4])
local before = tonumber(redis.call('HGET', K_PROGRESS, 'offset'))
if before and before == before and before > offset and before < 2^53 then
  offset = before
end
redis.call('HSET', K_PROGRESS, 'offset', string.format('%d', offset))
if ARGV[5] == '1' then
  redis.call('HSET', K_PROGRESS, 'done', 1)
  redis.call('DEL', K_CLAIM)
else
  redis.call('PEXPIRE', K_CLAIM, ARGV[3])
end
return 1
