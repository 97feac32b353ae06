-- release: put a claimed entry back to wait until a retry time.
--
-- KEYS[1]  <prefix>:{<shard>}:due       ZSET
-- KEYS[2]  <prefix>:{<shard>}:inflight  ZSET
-- KEYS[3]  <prefix>:{<shard>}:claimed   HASH
-- KEYS[4]  <prefix>:{<shard>}:tokens    HASH id -> token of the current claim
-- ARGV[1]  id
-- ARGV[2]  retry score (integer ms)
-- ARGV[3]  wake-up channel
-- ARGV[4]  origin (see schedule.lua)
-- ARGV[5]  token of the claim being released (as claim.lua returned it)
--
-- Only a live claim is released, and only the one whose token is given: an entry cancelled,
-- acknowledged, requeued, or claimed again meanwhile (even for the same due time) stays as it is.
-- ZADD NX: if the id was scheduled again while claimed, that newer due time wins.
--
-- Result:  1  released and now the earliest of its shard (wake-up published)
--          0  released (or a newer schedule kept)
--         -1  no live claim with this token: nothing changed
-- Cost:    O(log N).

if redis.call('HGET', KEYS[4], ARGV[1]) ~= ARGV[5] or redis.call('ZREM', KEYS[2], ARGV[1]) == 0 then
  return -1
end
redis.call('HDEL', KEYS[3], ARGV[1])
redis.call('HDEL', KEYS[4], ARGV[1])
if redis.call('ZADD', KEYS[1], 'NX', ARGV[2], ARGV[1]) == 0 then
  return 0
end
local first = redis.call('ZRANGE', KEYS[1], 0, 0)
if first[1] == ARGV[1] then
  redis.call('PUBLISH', ARGV[3], ARGV[2] .. ' ' .. ARGV[4])
  return 1
end
return 0
