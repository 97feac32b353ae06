-- repair: the resync's write, which must not undo what happened since the resync read the schedule.
--
-- KEYS[1]  <prefix>:{<shard>}:due      ZSET member = id, score = due time (ms, Redis clock)
-- KEYS[2]  <prefix>:{<shard>}:claimed  HASH id -> due score of the current claim
-- ARGV[1]  id
-- ARGV[2]  due score of the task (integer ms)
-- ARGV[3]  wake-up channel
-- ARGV[4]  origin (see schedule.lua)
--
-- The resync compares a snapshot of Redis with the tasks, and entries move meanwhile: one may be
-- claimed, released with a retry time, or released and claimed again between its reads. So it
-- writes only what is still wrong now: an entry neither waiting nor claimed is added, and one
-- waiting with a score before the due time is moved to it. A claimed entry is the claim's business;
-- one waiting at or after the due time carries a retry time the firer chose (API backoff, or clocks
-- that disagree), which schedule.lua would overwrite.
--
-- Result:  1  written and now the earliest of its shard ("<score> <origin>" was published)
--          0  written, not the earliest
--         -1  left alone: claimed, or already waiting at or after the due time
-- Cost:    O(log N): one HEXISTS, one ZSCORE, at most one ZADD, one ZRANGE and one PUBLISH.

if redis.call('HEXISTS', KEYS[2], ARGV[1]) == 1 then
  return -1
end
local current = redis.call('ZSCORE', KEYS[1], ARGV[1])
if current and tonumber(current) >= tonumber(ARGV[2]) then
  return -1
end
redis.call('ZADD', KEYS[1], ARGV[2], ARGV[1])
local first = redis.call('ZRANGE', KEYS[1], 0, 0)
if first[1] == ARGV[1] then
  redis.call('PUBLISH', ARGV[3], ARGV[2] .. ' ' .. ARGV[4])
  return 1
end
return 0
