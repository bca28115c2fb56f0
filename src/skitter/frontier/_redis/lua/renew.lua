-- renew.lua: extend the leases of tasks still being processed (Frontier.renew).
--
-- KEYS: the eleven keys of _common.lua.
-- ARGV[1..5]: the header of _common.lua
-- ARGV[6] lease seconds: a renewed lease lasts until NOW + this
-- ARGV[7], ARGV[8], ...: taskid, token pairs
-- Returns: per pair, 1 if the lease was current (and is now extended), else 0.

local lost = job_lost()
if lost then
  return redis.error_reply(lost)
end

local deadline = NOW + tonumber(ARGV[ARG0 + 1])
local renewed = {}
for i = ARG0 + 2, #ARGV - 1, 2 do
  local tid = ARGV[i]
  local rec = current(tid, ARGV[i + 1])
  if rec then
    rec[WHEN] = deadline
    save(tid, rec)
    redis.call('ZADD', K_PROCESSING, num(deadline), entry_of(tid, rec))
    renewed[#renewed + 1] = 1
  else
    renewed[#renewed + 1] = 0
  end
end
return renewed
