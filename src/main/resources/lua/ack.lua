-- ack: remove claims for good, their effect is durable. Many claims in one call.
--
-- KEYS[1]  <prefix>:{<shard>}:inflight  ZSET
-- KEYS[2]  <prefix>:{<shard>}:claimed   HASH id -> score the current claim was made at
-- ARGV     id1, score1, id2, score2, ... (the caller sends at most 1000 pairs per call)
--
-- A claim is removed only if it is still the one acknowledged: when the task was rescheduled and
-- claimed again meanwhile, the old claim's acknowledgement must not drop the new claim (its holder
-- could then crash with nothing left to requeue).
--
-- Result:  number of claims removed
-- Cost:    O(M log N) for M pairs: one HGET, and for a match one ZREM and one HDEL, each.

local removed = 0
for i = 1, #ARGV, 2 do
  local claimedAt = redis.call('HGET', KEYS[2], ARGV[i])
  if claimedAt and tonumber(claimedAt) == tonumber(ARGV[i + 1]) then
    removed = removed + redis.call('ZREM', KEYS[1], ARGV[i])
    redis.call('HDEL', KEYS[2], ARGV[i])
  end
end
return removed
