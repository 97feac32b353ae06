/**
 * The Redis schedule: entries (an opaque id and a due time) that become due by the Redis server's
 * clock, are claimed atomically under a lease, and are fired by the {@link
 * io.delayedtask.operator.schedule.SchedulePoller}.
 *
 * <h2>Key layout</h2>
 *
 * <p>The schedule is split into N shards (default 1). An id lives in shard {@code CRC32(id) mod N}.
 * Per shard, five keys share one hash tag, so every script touches a single Redis Cluster slot:
 *
 * <pre>
 * &lt;prefix&gt;:{&lt;tag&gt;}:due       ZSET  member = id, score = due time (ms since the epoch)
 * &lt;prefix&gt;:{&lt;tag&gt;}:inflight  ZSET  member = id, score = lease deadline (ms, Redis clock)
 * &lt;prefix&gt;:{&lt;tag&gt;}:claimed   HASH  id -&gt; due score the in-flight entry was claimed for
 * &lt;prefix&gt;:{&lt;tag&gt;}:tokens    HASH  id -&gt; token of the in-flight entry's current claim
 * &lt;prefix&gt;:{&lt;tag&gt;}:claimseq  STRING counter the shard's claim tokens are numbered by (created at the Redis clock in µs)
 * &lt;prefix&gt;:wakeup              pub/sub channel, message "&lt;score&gt; &lt;origin&gt;"
 * </pre>
 *
 * <p>The prefix is {@code DELAYEDTASK_KEY_PREFIX}. The tag is the shard number ({@code
 * delayedtask:{0}:due} for one shard) unless that number hashes outside the shard's equal share of
 * the 16384 slots, in which case it is {@code <shard>-<k>} for the smallest k that hashes inside
 * ({@link io.delayedtask.operator.schedule.ScheduleKeys}): N shards then sit on N different masters
 * of an evenly split cluster. Changing N moves ids to other shards; entries left in old shards are
 * not read any more, and the operator's resync schedules the DelayedTasks again.
 *
 * <h2>Scripts</h2>
 *
 * <p>Every change goes through a Lua script under {@code src/main/resources/lua/} (each file opens
 * with its KEYS, ARGV, result and cost), run by EVALSHA with one EVAL fallback on NOSCRIPT:
 * schedule, repair (the resync's write, many entries per call), cancel, claim, ack (many ids per
 * call), release, requeue, counts, and for queues queue-claim, queue-free, queue-counts. Due-ness
 * is judged only by {@code TIME} inside the scripts: an entry is claimed when its score is at or
 * before the server's time in whole ms, so it is never claimed early, whatever the local clocks
 * say.
 *
 * <h2>Claims, leases and replays</h2>
 *
 * <p>A claim first returns expired leases to the due set (at the due time they were claimed for,
 * kept in the claimed hash), then moves at most N due entries into flight (cap 1000 per call; the
 * poller uses 100) and returns them with the server time and the next waiting score: one round trip
 * per wake-up. The lease is {@code DELAYEDTASK_CLAIM_LEASE_SECONDS} (60 s by default): it must
 * outlast the slowest firing, or another poller takes the entry back while it is being fired.
 *
 * <p>Each claim gets a token, {@code <claimer>:<shard>:<n>} with the claimer's identity and a
 * number from the shard's counter, so no two claims share one. Acknowledging and releasing name the
 * claim by its token and act only while it is still the entry's current claim. If Lettuce replays a
 * claim after a reconnect, the first result is lost but its entries sit in flight until their lease
 * expires and are then claimed again: nothing is lost, an entry may be handled twice (the
 * operator's deterministic Job names and guarded status writes make that harmless).
 *
 * <ul>
 *   <li>Scheduling an id that is claimed for the same due time does nothing (a reconcile during
 *       firing does not fire it twice); a different due time adds it to the due set again.
 *   <li>Release and ack act only on the live claim whose token they carry; release uses ZADD NX, so
 *       a newer schedule of the same id wins over a retry time.
 *   <li>A poller whose lease ran out (a paused leader, a firing slower than the lease) and whose
 *       entry was claimed again by another, even for the same due time, holds a token that no
 *       longer matches: when it wakes, its ack or release changes nothing, and the new holder's
 *       claim stays in flight until that holder acknowledges it or its lease runs out.
 *   <li>Requeueing (a lease run out, or a new leader taking over every claim) and cancelling drop
 *       the token with the claim. An entry the old holder fired and the new holder fires again does
 *       no harm: Job names are deterministic, and the reconciler that fires checks the task's
 *       status and writes it with the resourceVersion it decided from.
 * </ul>
 *
 * <h2>Queues</h2>
 *
 * <p>A task naming a DelayedTaskQueue waits in that queue's key group instead of its shard, with
 * one hash tag per queue ({@code q:<namespace>/<queue>}, {@link
 * io.delayedtask.operator.schedule.ScheduleKeys#queueGroup}):
 *
 * <pre>
 * &lt;prefix&gt;:{q:&lt;ns&gt;/&lt;queue&gt;}:due|inflight|claimed|tokens|claimseq   as a shard's
 * &lt;prefix&gt;:{q:&lt;ns&gt;/&lt;queue&gt;}:bucket    HASH tokens, at (ms, Redis clock), dispatched (total)
 * &lt;prefix&gt;:{q:&lt;ns&gt;/&lt;queue&gt;}:running   ZSET id -&gt; when its dispatch began (the concurrency slots)
 * &lt;prefix&gt;:{q:&lt;ns&gt;/&lt;queue&gt;}:released  STRING set while the DelayedTaskQueue is deleted
 * </pre>
 *
 * <p>queue-claim.lua claims from a queue within its pause, token bucket and concurrency, taking
 * tokens and slots in the same atomic step, and reports what it held and why ({@link
 * io.delayedtask.operator.schedule.QueueHold}); queue-free.lua frees a slot when a dispatch ends;
 * queue-counts.lua is the status's snapshot. Acks and releases of a queue's claims go to its group
 * ({@link io.delayedtask.operator.schedule.ClaimedEntry#queue()}). {@link
 * io.delayedtask.operator.schedule.QueueGroups} decides which queues a claim asks: a held queue is
 * not asked until something changes, so the cost of waiting tasks does not grow with their number.
 * Wake-ups of a queue's entries carry the queue: {@code "<score> <origin> q:<ns>/<queue>"}.
 *
 * <h2>Wake-ups</h2>
 *
 * <p>When a schedule, repair or release makes an entry the earliest of its shard, the script
 * publishes its score on the wake-up channel; the writing process notifies its own poller directly
 * and ignores its own message (the origin field), other processes' pollers wake through the
 * subscription.
 */
package io.delayedtask.operator.schedule;
