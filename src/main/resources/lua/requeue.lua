-- requeue: return every claim, lease or not, to the due set (a new leader taking over the claims
-- of one that died with them; claims whose lease ran out are requeued by claim.lua itself).
--
-- KEYS[1]  <prefix>:{<shard>}:due       ZSET
-- KEYS[2]  <prefix>:{<shard>}:inflight  ZSET
-- KEYS[3]  <prefix>:{<shard>}:claimed   HASH
-- KEYS[4]  <prefix>:{<shard>}:tokens    HASH (the requeued claims' tokens are dropped: their
--          holders can no longer acknowledge or release them)
-- ARGV[1]  max entries to requeue in this call
--
-- Each goes back at the due time it was claimed for (ZADD NX: a newer schedule wins).
--
-- Result:  number of entries requeued (the caller calls again while it equals max)
-- Cost:    O(log N + M) for M <= max entries.

local time = redis.call('TIME')
local now = tonumber(time[1]) * 1000 + math.floor(tonumber(time[2]) / 1000)
local claims = redis.call('ZRANGE', KEYS[2], 0, tonumber(ARGV[1]) - 1)
if #claims == 0 then
  return 0
end
for _, id in ipairs(claims) do
  local due = redis.call('HGET', KEYS[3], id) or now
  redis.call('ZADD', KEYS[1], 'NX', due, id)
end
redis.call('ZREM', KEYS[2], unpack(claims))
redis.call('HDEL', KEYS[3], unpack(claims))
redis.call('HDEL', KEYS[4], unpack(claims))
return #claims
