-- queue-claim: claim due entries of one queue within its limits, in the same atomic step as the
-- limits are taken: the pause, the token bucket (rate) and the running set (concurrency) live in
-- the queue's own keys, so a leader change or a restart neither resets nor doubles them, and two
-- operators claiming at once can never together exceed them.
--
-- KEYS[1]  <prefix>:{q:<ns>/<queue>}:due       ZSET member = id, score = due time (ms)
-- KEYS[2]  <prefix>:{q:<ns>/<queue>}:inflight  ZSET member = id, score = lease deadline (ms)
-- KEYS[3]  <prefix>:{q:<ns>/<queue>}:claimed   HASH id -> due score the entry was claimed for
-- KEYS[4]  <prefix>:{q:<ns>/<queue>}:tokens    HASH id -> token of the current claim
-- KEYS[5]  <prefix>:{q:<ns>/<queue>}:claimseq  STRING counter the tokens are numbered by
-- KEYS[6]  <prefix>:{q:<ns>/<queue>}:bucket    HASH tokens, at (ms, Redis clock), dispatched (total)
-- KEYS[7]  <prefix>:{q:<ns>/<queue>}:running   ZSET member = id, score = when its dispatch began (ms)
-- KEYS[8]  <prefix>:{q:<ns>/<queue>}:released  STRING set when the DelayedTaskQueue was deleted
-- ARGV[1]  max entries to claim (the caller's share of its batch)
-- ARGV[2]  lease (ms)
-- ARGV[3]  token prefix "<claimer>:q:<ns>/<queue>"
-- ARGV[4]  mode: "open" (the queue's limits apply), "paused", "missing" (no such queue: hold),
--          "released" (the queue was deleted: no limits); "missing" with KEYS[8] set is "released"
--          (the deletion was seen by an operator before this one: its tasks stay released)
-- ARGV[5]  maxDispatchesPerSecond, or "" for no rate limit
-- ARGV[6]  maxBurst (the bucket's size; with a rate only)
-- ARGV[7]  maxConcurrentDispatches, or "" for no limit
-- ARGV[8]  watermark: held entries scored at or before it were reported already ("-inf": none)
-- ARGV[9]  most held ids to report
-- ARGV[10] "takeover" on this leader's first claim of the queue: every claim goes back to the due
--          set at once, lease or not (the claims are a previous leader's, as requeue.lua does for
--          the shards), and their running slots are freed: the claim that was not settled is made
--          again and takes its slot again, and the reconcile then keeps it while a Job it created
--          runs; a slot kept here would instead hold the queue one short, its own entry included.
--
-- First returns claims whose lease ran out (with ARGV[10], every claim) to the due set. Then the bucket is
-- refilled by the time since its last refill (Redis TIME; a clock that went back refills
-- nothing), never above maxBurst; a missing bucket starts full. It claims, oldest due first, at
-- most min(max, whole tokens, concurrency - |running|) entries whose score <= now, takes a token
-- for each and adds each to running, where it stays until queue-free.lua (its dispatch ended) or
-- cancel.lua removes it: a claim's lease is about the claim, not about the dispatch.
--
-- Result:  { seconds, microseconds (TIME), next score after now or '', held, reason or '',
--            next token (ms) or '', watermark after this call, number of held ids reported,
--            held id1, ..., then id1, due1, token1, id2, due2, token2, ... }
--          held: due entries left waiting; reason: why (QueuePaused, QueueMissing, RateLimited,
--          ConcurrencyLimited), '' when the only cause was max. Held ids are those scored after
--          ARGV[8] (oldest first, at most ARGV[9], extended to every id sharing the last score so
--          that no id is skipped), for the operator to mark them Queued once.
-- Cost:    O(log N + M) for M = requeued + claimed + reported entries (with ARGV[10], every claim
--          of the queue: once per queue and leader term).

local time = redis.call('TIME')
local now = tonumber(time[1]) * 1000 + math.floor(tonumber(time[2]) / 1000)
local max = tonumber(ARGV[1])
local lease = tonumber(ARGV[2])
local mode = ARGV[4]
if mode == 'missing' and redis.call('EXISTS', KEYS[8]) == 1 then
  mode = 'released'
end

local takeover = ARGV[10] == 'takeover'
local expired
if takeover then
  expired = redis.call('ZRANGE', KEYS[2], 0, -1)
else
  expired = redis.call('ZRANGEBYSCORE', KEYS[2], '-inf', now, 'LIMIT', 0, 1000)
end
if #expired > 0 then
  for _, id in ipairs(expired) do
    local due = redis.call('HGET', KEYS[3], id) or now
    redis.call('ZADD', KEYS[1], 'NX', due, id)
  end
  redis.call('ZREM', KEYS[2], unpack(expired))
  redis.call('HDEL', KEYS[3], unpack(expired))
  redis.call('HDEL', KEYS[4], unpack(expired))
  if takeover then
    redis.call('ZREM', KEYS[7], unpack(expired))
  end
end

local allowed = max
local limitedBy = ''
local nextToken = ''
local tokens = nil
local rate = tonumber(ARGV[5])
if mode == 'paused' then
  allowed, limitedBy = 0, 'QueuePaused'
elseif mode == 'missing' then
  allowed, limitedBy = 0, 'QueueMissing'
elseif mode == 'open' then
  if rate then
    local burst = tonumber(ARGV[6])
    local stored = redis.call('HMGET', KEYS[6], 'tokens', 'at')
    tokens = tonumber(stored[1])
    local at = tonumber(stored[2])
    if not tokens or not at then
      tokens = burst
    elseif now > at then
      tokens = tokens + (now - at) * rate / 1000
    end
    if tokens > burst then
      tokens = burst
    end
    local whole = math.floor(tokens)
    if whole < allowed then
      allowed, limitedBy = whole, 'RateLimited'
    end
  end
  local concurrency = tonumber(ARGV[7])
  if concurrency then
    local free = concurrency - redis.call('ZCARD', KEYS[7])
    if free < 0 then
      free = 0
    end
    if free < allowed then
      allowed, limitedBy = free, 'ConcurrencyLimited'
    end
  end
end

local claims, claimTokens = {}, {}
if allowed > 0 then
  claims = redis.call('ZRANGEBYSCORE', KEYS[1], '-inf', now, 'WITHSCORES', 'LIMIT', 0, allowed)
end
local claimedCount = #claims / 2
if claimedCount > 0 then
  local deadline = now + lease
  redis.call('SET', KEYS[5], time[1] .. string.format('%06d', tonumber(time[2])), 'NX')
  local last = redis.call('INCRBY', KEYS[5], claimedCount)
  local serial = last - claimedCount
  local leases, claimedFor, tokenOf, running, ids = {}, {}, {}, {}, {}
  for i = 1, #claims, 2 do
    local id, score = claims[i], claims[i + 1]
    serial = serial + 1
    local token = ARGV[3] .. ':' .. string.format('%.0f', serial)
    leases[#leases + 1] = deadline
    leases[#leases + 1] = id
    claimedFor[#claimedFor + 1] = id
    claimedFor[#claimedFor + 1] = score
    tokenOf[#tokenOf + 1] = id
    tokenOf[#tokenOf + 1] = token
    running[#running + 1] = now
    running[#running + 1] = id
    ids[#ids + 1] = id
    claimTokens[#claimTokens + 1] = token
  end
  redis.call('ZADD', KEYS[2], unpack(leases))
  redis.call('HSET', KEYS[3], unpack(claimedFor))
  redis.call('HSET', KEYS[4], unpack(tokenOf))
  redis.call('ZADD', KEYS[7], unpack(running))
  redis.call('ZREM', KEYS[1], unpack(ids))
  redis.call('HINCRBY', KEYS[6], 'dispatched', claimedCount)
end
if tokens then
  redis.call('HSET', KEYS[6], 'tokens', tostring(tokens - claimedCount), 'at', now)
  if limitedBy == 'RateLimited' then
    local missing = 1 - (tokens - claimedCount)
    nextToken = now + math.ceil(missing * 1000 / rate)
  end
end

local held = redis.call('ZCOUNT', KEYS[1], '-inf', now)
if held == 0 then
  limitedBy = ''
end
local result = { time[1], time[2], '', held, limitedBy, nextToken, ARGV[8], 0 }
local later = redis.call('ZRANGEBYSCORE', KEYS[1], '(' .. now, '+inf', 'WITHSCORES', 'LIMIT', 0, 1)
if later[2] then
  result[3] = later[2]
end
if held > 0 and limitedBy ~= '' then
  local from = ARGV[8] == '-inf' and '-inf' or '(' .. ARGV[8]
  local report = tonumber(ARGV[9])
  local fresh = redis.call('ZRANGEBYSCORE', KEYS[1], from, now, 'WITHSCORES', 'LIMIT', 0, report)
  if #fresh > 0 then
    local lastScore = fresh[#fresh]
    if #fresh / 2 == report then
      -- ids sharing the last score beyond the page: report them too, so the watermark skips none
      local ties = redis.call('ZRANGEBYSCORE', KEYS[1], lastScore, lastScore)
      local seen = {}
      for i = 1, #fresh, 2 do
        seen[fresh[i]] = true
      end
      for _, id in ipairs(ties) do
        if not seen[id] then
          fresh[#fresh + 1] = id
          fresh[#fresh + 1] = lastScore
        end
      end
    end
    result[7] = lastScore
    for i = 1, #fresh, 2 do
      result[#result + 1] = fresh[i]
    end
    result[8] = #fresh / 2
  end
end
for i = 1, #claims, 2 do
  result[#result + 1] = claims[i]
  result[#result + 1] = claims[i + 1]
  result[#result + 1] = claimTokens[(i + 1) / 2]
end
return result
