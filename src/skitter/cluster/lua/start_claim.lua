-- start_claim.lua: try to become the worker that feeds the start requests
-- (StartClaim.wait_turn).
--
-- KEYS[1] meta        the job's meta hash (its epoch)
-- KEYS[2] claim       string: the fencing token of the claim's holder (expires: PX)
-- KEYS[3] progress    hash: offset (start requests queued so far), done
-- ARGV[1] epoch       the job's, as the caller joined it
-- ARGV[2] token       a fresh token for this attempt
-- ARGV[3] lease ms    how long the claim lasts unless renewed (Redis's clock)
-- Returns: -1 when every start request is queued already, -2 when another worker holds
-- the claim, else the offset to go on from (this caller now holds the claim).

local K_META, K_CLAIM, K_PROGRESS = KEYS[1], KEYS[2], KEYS[3]
local epoch = redis.call('HGET', K_META, 'epoch')
if not epoch then
  return redis.error_reply('skitter-lost: no epoch')
elseif epoch ~= ARGV[1] then
  return redis.error_reply('skitter-lost: a new epoch')
end
local progress = redis.call('HMGET', K_PROGRESS, 'done', 'offset')
if progress[1] then
  return -1
end
if not redis.call('SET', K_CLAIM, ARGV[2], 'NX', 'PX', ARGV[3]) then
  return -2
end
local offset = tonumber(progress[2])
if not (offset and offset == offset and offset >= 0 and offset < 2^53) then
  offset = 0  -- none yet, or not a count a worker wrote: start over (taskids dedupe)
end
return math.floor(offset)
