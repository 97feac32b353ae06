-- repair: the resync's write, which must not undo what happened since the resync read the schedule.
-- Many entries per call.
--
-- KEYS[1]  <prefix>:{<shard>}:due      ZSET member = id, score = due time (ms, Redis clock)
-- KEYS[2]  <prefix>:{<shard>}:claimed  HASH id -> due score of the current claim
-- ARGV[1]  wake-up channel
-- ARGV[2]  origin (see schedule.lua)
-- ARGV[3…] id1, score1, id2, score2, ... (scores as integer ms; the caller sends at most 500 pairs)
--
-- The resync compares a snapshot of Redis with the tasks, and entries move meanwhile: one may be
-- claimed, released with a retry time, or released and claimed again between its reads. So it
-- writes only what is still wrong now: an entry neither waiting nor claimed is added, and one
-- waiting with a score before the due time is moved to it. A claimed entry is the claim's business;
-- one waiting at or after the due time carries a retry time the reconciler chose (API backoff, or
-- clocks that disagree), which schedule.lua would overwrite.
--
-- Result:  { published score or -1, then per pair 1 (written) or 0 (left alone) }. When a written
--          entry became the earliest of its shard, "<score> <origin>" was published once.
-- Cost:    O(M log N) for M pairs: one HEXISTS and one ZSCORE each, at most one ZADD each; then one
--          ZRANGE and at most one PUBLISH.

local result = { -1 }
local earliest, earliestScore = nil, nil
for i = 3, #ARGV, 2 do
  local id, score = ARGV[i], ARGV[i + 1]
  local written = 0
  if redis.call('HEXISTS', KEYS[2], id) == 0 then
    local current = redis.call('ZSCORE', KEYS[1], id)
    if not current or tonumber(current) < tonumber(score) then
      redis.call('ZADD', KEYS[1], score, id)
      written = 1
      if not earliest or tonumber(score) < tonumber(earliestScore) then
        earliest, earliestScore = id, score
      end
    end
  end
  result[#result + 1] = written
end
if earliest then
  local first = redis.call('ZRANGE', KEYS[1], 0, 0)
  if first[1] == earliest then
    redis.call('PUBLISH', ARGV[1], earliestScore .. ' ' .. ARGV[2])
    result[1] = tonumber(earliestScore)
  end
end
return result
