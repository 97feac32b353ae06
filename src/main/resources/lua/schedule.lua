-- schedule: add an entry to the due set, or move it to a new due time.
--
-- KEYS[1]  <prefix>:{<shard>}:due      ZSET member = id, score = due time (ms, Redis clock)
-- KEYS[2]  <prefix>:{<shard>}:claimed  HASH id -> due score of the current claim
-- ARGV[1]  id
-- ARGV[2]  due score (integer ms since the epoch)
-- ARGV[3]  wake-up channel (<prefix>:wakeup)
-- ARGV[4]  origin: who writes, so the writer can ignore its own wake-up message
--
-- Result:  1  the entry is now the earliest of its shard; "<score> <origin>" was published
--          0  added or moved, not the earliest
--         -1  already claimed for this very due time: the claim will fire it, and a waiting
--             time left by a reschedule made meanwhile is removed (the task is back at the
--             claimed time; that waiting time would be claimed later for a due time no longer
--             the task's)
-- Cost:    O(log N): one HGET, one ZADD or ZREM, one ZRANGE of one element, at most one PUBLISH.

local claimedFor = redis.call('HGET', KEYS[2], ARGV[1])
if claimedFor and tonumber(claimedFor) == tonumber(ARGV[2]) then
  redis.call('ZREM', KEYS[1], ARGV[1])
  return -1
end
redis.call('ZADD', KEYS[1], ARGV[2], ARGV[1])
local first = redis.call('ZRANGE', KEYS[1], 0, 0)
if first[1] == ARGV[1] then
  redis.call('PUBLISH', ARGV[3], ARGV[2] .. ' ' .. ARGV[4])
  return 1
end
return 0
