-- release: put a claimed entry back to wait until a retry time.
--
-- KEYS[1]  <prefix>:{<shard>}:due       ZSET
-- KEYS[2]  <prefix>:{<shard>}:inflight  ZSET
-- KEYS[3]  <prefix>:{<shard>}:claimed   HASH
-- ARGV[1]  id
-- ARGV[2]  retry score (integer ms)
-- ARGV[3]  wake-up channel
-- ARGV[4]  origin (see schedule.lua)
-- ARGV[5]  score the released claim was made at
--
-- Only a live claim is released, and only the one given: an entry cancelled, acknowledged,
-- requeued, or rescheduled and claimed again meanwhile stays as it is. ZADD NX: if the id was scheduled again while claimed, that newer due time wins.
--
-- Result:  1  released and now the earliest of its shard (wake-up published)
--          0  released (or a newer schedule kept)
--         -1  no live claim: nothing changed
-- Cost:    O(log N).

local claimedAt = redis.call('HGET', KEYS[3], ARGV[1])
if not claimedAt or tonumber(claimedAt) ~= tonumber(ARGV[5]) or redis.call('ZREM', KEYS[2], ARGV[1]) == 0 then
  return -1
end
redis.call('HDEL', KEYS[3], ARGV[1])
if redis.call('ZADD', KEYS[1], 'NX', ARGV[2], ARGV[1]) == 0 then
  return 0
end
local first = redis.call('ZRANGE', KEYS[1], 0, 0)
if first[1] == ARGV[1] then
  redis.call('PUBLISH', ARGV[3], ARGV[2] .. ' ' .. ARGV[4])
  return 1
end
return 0
