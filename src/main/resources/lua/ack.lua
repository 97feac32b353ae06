-- ack: remove claims for good, their effect is durable. Many ids in one call.
--
-- KEYS[1]  <prefix>:{<shard>}:inflight  ZSET
-- KEYS[2]  <prefix>:{<shard>}:claimed   HASH
-- ARGV     ids (the caller sends at most 1000 per call)
--
-- Result:  number of ids that were in flight
-- Cost:    O(M log N) for M ids: one ZREM and one HDEL.

local removed = redis.call('ZREM', KEYS[1], unpack(ARGV))
redis.call('HDEL', KEYS[2], unpack(ARGV))
return removed
