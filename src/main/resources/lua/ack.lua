-- ack: remove claims for good, their effect is durable. Many claims in one call.
--
-- KEYS[1]  <prefix>:{<shard>}:inflight  ZSET
-- KEYS[2]  <prefix>:{<shard>}:claimed   HASH id -> due score of the current claim
-- KEYS[3]  <prefix>:{<shard>}:tokens    HASH id -> token of the current claim
-- ARGV     id1, token1, id2, token2, ... (tokens as claim.lua returned them; the caller sends at
--          most 200 pairs per call)
--
-- A claim is removed only if it is still the one acknowledged, by its token: when its lease ran
-- out and another poller claimed the entry again (for the same due time or a new one), the old
-- holder's acknowledgement must not drop the new claim (its holder could then crash with nothing
-- left to requeue, or the entry would vanish while it is being fired).
--
-- Result:  number of claims removed
-- Cost:    O(M log N) for M pairs: one HGET, and for a match one ZREM and two HDEL, each.

local removed = 0
for i = 1, #ARGV, 2 do
  if redis.call('HGET', KEYS[3], ARGV[i]) == ARGV[i + 1] then
    removed = removed + redis.call('ZREM', KEYS[1], ARGV[i])
    redis.call('HDEL', KEYS[2], ARGV[i])
    redis.call('HDEL', KEYS[3], ARGV[i])
  end
end
return removed
