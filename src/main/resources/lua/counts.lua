-- counts: one consistent snapshot of a shard for the gauges.
--
-- KEYS[1]  <prefix>:{<shard>}:due       ZSET
-- KEYS[2]  <prefix>:{<shard>}:inflight  ZSET
-- ARGV     none
--
-- Result:  { waiting, in flight, earliest due score or '', seconds, microseconds (TIME) }
-- Cost:    O(log N), read only.

local time = redis.call('TIME')
local first = redis.call('ZRANGE', KEYS[1], 0, 0, 'WITHSCORES')
return { redis.call('ZCARD', KEYS[1]), redis.call('ZCARD', KEYS[2]), first[2] or '', time[1], time[2] }
