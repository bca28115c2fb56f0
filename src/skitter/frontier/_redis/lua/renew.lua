-- renew.lua: extend the leases of tasks still being processed (Frontier.renew).
--
-- KEYS: the ten keys of _common.lua (meta, tasks, payloads, done, ready, delayed,
--       processing, bad, failed, bad_tasks).
-- ARGV[1] kind: "priority" | "fifo" | "lifo"
-- ARGV[2] deadline: now + lease seconds
-- ARGV[3] owner
-- ARGV[4], ARGV[5], ...: taskid, token pairs
-- Returns: how many of the leases were current (and are now extended).

local deadline, owner = ARGV[2], ARGV[3]
local deadline_n = tonumber(deadline)
local renewed = 0
for i = 4, #ARGV - 1, 2 do
  local tid = ARGV[i]
  local rec = current(tid, owner, ARGV[i + 1])
  if rec then
    rec[WHEN] = deadline_n
    save(tid, rec)
    redis.call('ZADD', K_PROCESSING, 'XX', deadline, entry_of(tid, rec))
    renewed = renewed + 1
  end
end
return renewed
