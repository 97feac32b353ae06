-- cancel: remove an entry whether it waits or is claimed. Idempotent.
--
-- KEYS[1]  <prefix>:{<shard>}:due       ZSET
-- KEYS[2]  <prefix>:{<shard>}:inflight  ZSET member = id, score = lease deadline (ms)
-- KEYS[3]  <prefix>:{<shard>}:claimed   HASH id -> claimed due score
-- KEYS[4]  <prefix>:{<shard>}:tokens    HASH id -> claim token
-- KEYS[5]  optional, a queue's <prefix>:{q:<ns>/<queue>}:running ZSET: its concurrency slot goes too
-- ARGV[1]  id
--
-- Result:  number of sets the id was removed from (0, 1 or 2)
-- Cost:    O(log N): two or three ZREM and two HDEL.

local removed = redis.call('ZREM', KEYS[1], ARGV[1]) + redis.call('ZREM', KEYS[2], ARGV[1])
redis.call('HDEL', KEYS[3], ARGV[1])
redis.call('HDEL', KEYS[4], ARGV[1])
if KEYS[5] then
  redis.call('ZREM', KEYS[5], ARGV[1])
end
return removed
