-- claim: move due entries into flight under a lease, judged by the Redis server clock only, and
-- give each claim a token that acknowledges or releases it, and nothing else.
--
-- KEYS[1]  <prefix>:{<shard>}:due       ZSET member = id, score = due time (ms)
-- KEYS[2]  <prefix>:{<shard>}:inflight  ZSET member = id, score = lease deadline (ms)
-- KEYS[3]  <prefix>:{<shard>}:claimed   HASH id -> due score the entry was claimed for
-- KEYS[4]  <prefix>:{<shard>}:tokens    HASH id -> token of the current claim
-- KEYS[5]  <prefix>:{<shard>}:claimseq  STRING counter the tokens are numbered by
-- ARGV[1]  max entries to claim (the caller caps it, so the script stays within a few ms)
-- ARGV[2]  lease (ms)
-- ARGV[3]  token prefix: who claims (the operator's identity) and the shard, "<claimer>:<shard>"
--
-- First returns claims whose lease ran out to the due set at their original due time (at most
-- max of them; ZADD NX so a newer schedule of the same id wins), then claims at most max entries
-- whose score <= now, where now = TIME in whole ms (so no entry is claimed before its score).
-- Each claim's token is "<ARGV[3]>:<n>" with n from one INCRBY of the shard's counter, so no two
-- claims share a token: a poller whose lease ran out while it fired, and whose entry was then
-- claimed again for the same due time, holds a token that no longer matches. A counter that is
-- missing (a new schedule, or Redis emptied by a FLUSHALL or a failover to an empty replica)
-- starts at the Redis clock in microseconds, not at 0: a poller still holding a claim from before
-- the flush then cannot share its token with a claim made after it (that would let its late ack or
-- release act on the new claim), unless more than one claim per microsecond was made before.
--
-- Result:  { seconds, microseconds (TIME), next waiting score or '',
--            id1, due1, token1, id2, due2, token2, ... }
--          The next waiting score is <= now when the cap left due entries behind.
-- Cost:    O(log N + M) for M = requeued + claimed entries, each at most max.

local time = redis.call('TIME')
local now = tonumber(time[1]) * 1000 + math.floor(tonumber(time[2]) / 1000)
local max = tonumber(ARGV[1])
local lease = tonumber(ARGV[2])

local expired = redis.call('ZRANGEBYSCORE', KEYS[2], '-inf', now, 'LIMIT', 0, max)
if #expired > 0 then
  for _, id in ipairs(expired) do
    local due = redis.call('HGET', KEYS[3], id) or now
    redis.call('ZADD', KEYS[1], 'NX', due, id)
  end
  redis.call('ZREM', KEYS[2], unpack(expired))
  redis.call('HDEL', KEYS[3], unpack(expired))
  redis.call('HDEL', KEYS[4], unpack(expired))
end

local result = { time[1], time[2], '' }
local due = redis.call('ZRANGEBYSCORE', KEYS[1], '-inf', now, 'WITHSCORES', 'LIMIT', 0, max)
if #due > 0 then
  local deadline = now + lease
  redis.call('SET', KEYS[5], time[1] .. string.format('%06d', tonumber(time[2])), 'NX')
  local last = redis.call('INCRBY', KEYS[5], #due / 2)
  local serial = last - #due / 2
  local leases, claims, tokens, ids = {}, {}, {}, {}
  for i = 1, #due, 2 do
    local id, score = due[i], due[i + 1]
    serial = serial + 1
    local token = ARGV[3] .. ':' .. string.format('%.0f', serial) -- exact: serial < 2^53
    leases[#leases + 1] = deadline
    leases[#leases + 1] = id
    claims[#claims + 1] = id
    claims[#claims + 1] = score
    tokens[#tokens + 1] = id
    tokens[#tokens + 1] = token
    ids[#ids + 1] = id
    result[#result + 1] = id
    result[#result + 1] = score
    result[#result + 1] = token
  end
  redis.call('ZADD', KEYS[2], unpack(leases))
  redis.call('HSET', KEYS[3], unpack(claims))
  redis.call('HSET', KEYS[4], unpack(tokens))
  redis.call('ZREM', KEYS[1], unpack(ids))
end

local nextEntry = redis.call('ZRANGE', KEYS[1], 0, 0, 'WITHSCORES')
if nextEntry[2] then
  result[3] = nextEntry[2]
end
return result
