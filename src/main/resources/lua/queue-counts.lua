-- queue-counts: one consistent snapshot of a queue for its status and gauges.
--
-- KEYS[1]  <prefix>:{q:<ns>/<queue>}:due      ZSET
-- KEYS[2]  <prefix>:{q:<ns>/<queue>}:inflight ZSET
-- KEYS[3]  <prefix>:{q:<ns>/<queue>}:bucket   HASH (field dispatched: the queue's total)
-- KEYS[4]  <prefix>:{q:<ns>/<queue>}:running  ZSET
-- ARGV     none
--
-- Result:  { pending (due after now), waiting (due at or before now), in flight (running),
--            oldest waiting score or '', dispatched total, claims in flight }
-- Cost:    O(log N), read only.

local time = redis.call('TIME')
local now = tonumber(time[1]) * 1000 + math.floor(tonumber(time[2]) / 1000)
local waiting = redis.call('ZCOUNT', KEYS[1], '-inf', now)
local pending = redis.call('ZCARD', KEYS[1]) - waiting
local first = redis.call('ZRANGE', KEYS[1], 0, 0, 'WITHSCORES')
local oldest = ''
if waiting > 0 and first[2] then
  oldest = first[2]
end
return { pending, waiting, redis.call('ZCARD', KEYS[4]), oldest,
  tonumber(redis.call('HGET', KEYS[3], 'dispatched') or '0'), redis.call('ZCARD', KEYS[2]) }
