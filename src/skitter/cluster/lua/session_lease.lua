-- session_lease.lua: lease uses of a session of one scope, shared by every worker of
-- the job (RedisSessions.lease), so that uses are counted job-wide and the pool never
-- grows past its size, however many workers take sessions at once.
--
-- KEYS[1] sessions  hash: made (sessions created in the job: the next id)
-- KEYS[2] scope     hash: session id -> JSON record of each live session of the scope
-- KEYS[3] jars      hash: session id -> its cookie jar (JSON)
-- KEYS[4] gone      list: "id reason" of every retired session, oldest first
-- ARGV[1] wanted    a session id the request names, or ""
-- ARGV[2] size      live sessions the scope may have
-- ARGV[3] max uses  uses a session makes before it is retired (0: no limit)
-- ARGV[4] lease     uses to grant at most
-- ARGV[5] cursor    entries of KEYS[4] the caller has seen
-- ARGV[6] scope     the scope's name, for the record
-- ARGV[7] known     JSON {id: jar version} of the jars the caller holds
-- ARGV[8...]        fingerprints, given to new sessions in turn
-- Returns {id, record (JSON), granted, new (1/0), jar (JSON, or "" if the caller holds
-- this version), {entries of KEYS[4] from the cursor on}}. The session granted its last
-- use is taken out of the scope at once (no other worker gets it) and listed in KEYS[4]
-- (the others drop it, and its jar); its "max_uses" retirement is the caller's to count.

local size, max_uses, lease = tonumber(ARGV[2]), tonumber(ARGV[3]), tonumber(ARGV[4])
local id, record, new = nil, nil, 0
if ARGV[1] ~= '' then
  local raw = redis.call('HGET', KEYS[2], ARGV[1])
  if raw then
    id, record = ARGV[1], cjson.decode(raw)
  end
end
if not id and redis.call('HLEN', KEYS[2]) < size then
  local made = redis.call('HINCRBY', KEYS[1], 'made', 1)
  id, record, new = 's' .. made, {scope = ARGV[6], uses = 0, jar = 0}, 1
  local count = #ARGV - 7
  if count > 0 then
    record.fingerprint = ARGV[8 + (made - 1) % count]
  end
end
if not id then
  -- the live session with the fewest uses: the scope's load spread over its sessions
  local all = redis.call('HGETALL', KEYS[2])
  for i = 1, #all, 2 do
    local candidate = cjson.decode(all[i + 1])
    if not record or candidate.uses < record.uses then
      id, record = all[i], candidate
    end
  end
end
local granted = lease
if max_uses > 0 then
  granted = math.min(lease, max_uses - record.uses)
end
record.uses = record.uses + granted
if max_uses > 0 and record.uses >= max_uses then
  redis.call('HDEL', KEYS[2], id)
  redis.call('HDEL', KEYS[3], id)
  redis.call('RPUSH', KEYS[4], id .. ' max_uses')  -- the others holding uses drop it
else
  redis.call('HSET', KEYS[2], id, cjson.encode(record))
end
local jar = ''
local known = cjson.decode(ARGV[7])
if record.jar > 0 and known[id] ~= record.jar then
  jar = redis.call('HGET', KEYS[3], id) or ''
end
local gone = redis.call('LRANGE', KEYS[4], tonumber(ARGV[5]), -1)
return {id, cjson.encode(record), granted, new, jar, gone}
