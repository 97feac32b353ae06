-- queue-free: a dispatch of the queue ended (its delivery attempt was answered, its Job finished
-- or went, a status-only firing was recorded, or the claim fired nothing): its concurrency slot is
-- free.
--
-- KEYS[1]  <prefix>:{q:<ns>/<queue>}:running  ZSET member = id
-- KEYS[2]  <prefix>:{q:<ns>/<queue>}:due      ZSET
-- ARGV     id1, id2, ...
--
-- Result:  { slots freed, due entries waiting (score <= now by TIME) }: with both > 0 the caller
--          polls the queue again, as a slot it was waiting for is free.
-- Cost:    O(M log N) for M ids, then one ZCOUNT.

local time = redis.call('TIME')
local now = tonumber(time[1]) * 1000 + math.floor(tonumber(time[2]) / 1000)
local freed = redis.call('ZREM', KEYS[1], unpack(ARGV))
return { freed, redis.call('ZCOUNT', KEYS[2], '-inf', now) }
