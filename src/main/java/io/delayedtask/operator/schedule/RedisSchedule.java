package io.delayedtask.operator.schedule;

import io.delayedtask.operator.config.OperatorConfig;
import io.lettuce.core.RedisNoScriptException;
import io.lettuce.core.ScanArgs;
import io.lettuce.core.ScanCursor;
import io.lettuce.core.ScoredValue;
import io.lettuce.core.ScoredValueScanCursor;
import io.lettuce.core.ScriptOutputType;
import io.lettuce.core.cluster.api.async.RedisClusterAsyncCommands;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.Collection;
import java.util.HashSet;
import java.util.LinkedHashMap;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.Optional;
import java.util.Set;
import java.util.UUID;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionException;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.atomic.AtomicLong;
import java.util.function.Consumer;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The schedule in Redis: per shard a due ZSET, an in-flight ZSET, a claimed HASH, a tokens HASH and
 * a claim counter (see package-info), changed only by the Lua scripts under {@code
 * src/main/resources/lua/}, each run by EVALSHA with one fallback to EVAL on NOSCRIPT. Due-ness is
 * judged by the Redis clock inside the scripts; this class never reads the local clock.
 *
 * <p>Closing the schedule closes its {@link RedisConnections}.
 */
public final class RedisSchedule implements TaskSchedule {
  public static final int DEFAULT_SHARDS = 1;

  /** Largest claim one script call makes: keeps each claim script well under a few ms. */
  public static final int MAX_CLAIM = 1000;

  /**
   * Ids per ack script call. The benchmark measured a 1,000-id ack at up to 10 ms of Redis time;
   * 200 keeps each call near a claim of 100 while still amortising the round trip.
   */
  private static final int ACK_CHUNK = 200;

  /** Entries per repair script call: a resync of 50,000 tasks is 100 pipelined calls. */
  private static final int REPAIR_CHUNK = 500;

  private static final int SCAN_PAGE = 1000;
  private static final Logger LOG = LoggerFactory.getLogger(RedisSchedule.class);

  private final RedisConnections connections;
  private final ScheduleKeys keys;

  /**
   * Identifies this instance's wake-up messages, so it ignores its own (already delivered
   * in-process).
   */
  private final String origin = UUID.randomUUID().toString();

  /** Who claims, the first part of every claim token (the operator's identity, else the origin). */
  private final String claimer;

  private final List<Consumer<Instant>> wakeupListeners = new CopyOnWriteArrayList<>();
  private final AtomicLong noScriptFallbacks = new AtomicLong();
  private final java.util.concurrent.atomic.AtomicInteger claimRotation =
      new java.util.concurrent.atomic.AtomicInteger();
  private volatile boolean subscriptionFailureLogged;
  private final QueueGroups queues = new QueueGroups();
  private final List<Consumer<List<QueueHold>>> holdListeners = new CopyOnWriteArrayList<>();

  /**
   * The Redis clock (ms) at the last claim and the monotonic time then: which queues are due to be
   * polled.
   */
  private volatile long lastServerMillis;

  private volatile long lastServerNanos = System.nanoTime();

  public RedisSchedule(RedisConnections connections, String keyPrefix, int shards) {
    this(connections, keyPrefix, shards, null);
  }

  /** {@code claimer} names this process in its claim tokens (null: a random id). */
  public RedisSchedule(RedisConnections connections, String keyPrefix, int shards, String claimer) {
    this.connections = Objects.requireNonNull(connections);
    this.keys = new ScheduleKeys(keyPrefix, shards);
    this.claimer = claimer == null || claimer.isBlank() ? origin : claimer;
  }

  /** The schedule the configuration names, with its number of shards. */
  public static RedisSchedule open(OperatorConfig config) {
    return open(config, config.redisShards());
  }

  public static RedisSchedule open(OperatorConfig config, int shards) {
    return new RedisSchedule(
        RedisConnections.open(config), config.keyPrefix(), shards, config.identity());
  }

  public ScheduleKeys keys() {
    return keys;
  }

  public RedisConnections connections() {
    return connections;
  }

  /** How often EVALSHA met NOSCRIPT and the script was sent again by EVAL. */
  public long noScriptFallbacks() {
    return noScriptFallbacks.get();
  }

  @Override
  public void schedule(String id, Instant due) {
    requireId(id);
    Objects.requireNonNull(due, "due");
    int shard = keys.shardOf(id);
    long score = score(due);
    Long result =
        connections.await(
            run(
                LuaScript.SCHEDULE,
                ScriptOutputType.INTEGER,
                new String[] {keys.due(shard), keys.claimed(shard)},
                id,
                Long.toString(score),
                keys.wakeupChannel(),
                origin),
            "schedule");
    if (result != null && result == 1) {
      notifyWakeup(Instant.ofEpochMilli(score));
    }
  }

  @Override
  public void schedule(
      String id, Instant due, Optional<QueueRef> into, Optional<QueueRef> leaving) {
    if (into.isEmpty()) {
      schedule(id, due);
      leaving.ifPresent(queue -> cancelIn(queue, id));
      return;
    }
    requireId(id);
    QueueRef queue = into.get();
    long score = score(due);
    queues.know(queue);
    int shard = keys.shardOf(id);
    // The shard's entry (the task named no queue before) goes; both calls in one round trip.
    CompletableFuture<Long> fromShard =
        run(
            LuaScript.CANCEL,
            ScriptOutputType.INTEGER,
            new String[] {
              keys.due(shard), keys.inFlight(shard), keys.claimed(shard), keys.tokens(shard)
            },
            id);
    CompletableFuture<Long> written =
        run(
            LuaScript.SCHEDULE,
            ScriptOutputType.INTEGER,
            new String[] {keys.due(queue), keys.claimed(queue)},
            id,
            Long.toString(score),
            keys.wakeupChannel(),
            origin + " q:" + queue);
    connections.await(fromShard, "schedule");
    connections.await(written, "schedule");
    leaving.filter(other -> !other.equals(queue)).ifPresent(other -> cancelIn(other, id));
    queues.scheduled(queue, score);
    notifyWakeup(Instant.ofEpochMilli(score));
  }

  @Override
  public void cancelQueued(String id, QueueRef queue) {
    requireId(id);
    cancelIn(queue, id);
  }

  @Override
  public Map<String, Instant> runningEntries(QueueRef queue) {
    Map<String, Instant> entries = new LinkedHashMap<>();
    scan(
        keys.running(queue),
        value -> entries.put(value.getValue(), Instant.ofEpochMilli((long) value.getScore())));
    return entries;
  }

  private void cancelIn(QueueRef queue, String id) {
    connections.await(
        run(
            LuaScript.CANCEL,
            ScriptOutputType.INTEGER,
            new String[] {
              keys.due(queue),
              keys.inFlight(queue),
              keys.claimed(queue),
              keys.tokens(queue),
              keys.running(queue)
            },
            id),
        "cancel");
    // Its concurrency slot may have gone with it: a queue waiting for one is asked again.
    queues.wake(queue);
    notifyWakeup(Instant.EPOCH);
  }

  @Override
  public void cancel(String id, Optional<QueueRef> queue) {
    cancel(id);
    queue.ifPresent(q -> cancelIn(q, id));
  }

  @Override
  public void freeSlots(QueueRef queue, Collection<String> ids) {
    if (ids.isEmpty()) {
      return;
    }
    List<Object> result =
        connections.await(
            run(
                LuaScript.QUEUE_FREE,
                ScriptOutputType.MULTI,
                new String[] {keys.running(queue), keys.due(queue)},
                ids.toArray(String[]::new)),
            "free queue slots");
    if ((Long) result.get(0) > 0 && (Long) result.get(1) > 0) {
      queues.wake(queue);
      notifyWakeup(Instant.EPOCH);
    }
  }

  @Override
  public void queueLimits(QueueRef queue, QueueLimits limits) {
    if (queues.limits(queue, limits)) {
      // A deletion is kept in Redis, so that another leader, or this one restarted, does not hold
      // the
      // released tasks as missing (queue-claim.lua); a queue created again clears it.
      try {
        RedisClusterAsyncCommands<String, String> commands = connections.commands();
        connections.await(
            limits.mode() == QueueLimits.Mode.RELEASED
                ? commands.set(keys.released(queue), "1").thenApply(ok -> 1L).toCompletableFuture()
                : commands.del(keys.released(queue)).toCompletableFuture(),
            "queue released");
      } catch (ScheduleUnavailableException e) {
        LOG.warn(
            "Could not record in Redis that queue {} is {}: {}",
            queue,
            limits.mode() == QueueLimits.Mode.RELEASED ? "deleted" : "there",
            e.getMessage());
      }
    }
    notifyWakeup(Instant.EPOCH);
  }

  @Override
  public void queueLimitsKnown() {
    queues.limitsKnown();
    notifyWakeup(Instant.EPOCH);
  }

  @Override
  public void knowQueues(Collection<QueueRef> known) {
    boolean added = false;
    for (QueueRef queue : known) {
      if (!queues.knows(queue)) {
        queues.know(queue);
        added = true;
      }
    }
    if (added) {
      notifyWakeup(Instant.EPOCH);
    }
  }

  @Override
  public List<QueueRef> knownQueues() {
    return queues.all();
  }

  @Override
  public AutoCloseable onQueueHolds(Consumer<List<QueueHold>> listener) {
    holdListeners.add(Objects.requireNonNull(listener));
    return () -> holdListeners.remove(listener);
  }

  @Override
  public Map<String, Instant> waitingEntries(QueueRef queue) {
    Map<String, Instant> entries = new LinkedHashMap<>();
    scan(
        keys.due(queue),
        value -> entries.put(value.getValue(), Instant.ofEpochMilli((long) value.getScore())));
    return entries;
  }

  @Override
  public List<String> inFlightIds(QueueRef queue) {
    Set<String> ids = new LinkedHashSet<>();
    scan(keys.inFlight(queue), value -> ids.add(value.getValue()));
    return List.copyOf(ids);
  }

  @Override
  public Set<String> repairAll(QueueRef queue, Map<String, Instant> dueById) {
    queues.know(queue);
    List<String> pairs = new ArrayList<>();
    dueById.forEach(
        (id, due) -> {
          requireId(id);
          pairs.add(id);
          pairs.add(Long.toString(score(due)));
        });
    Set<String> written = new LinkedHashSet<>();
    for (int from = 0; from < pairs.size(); from += 2 * REPAIR_CHUNK) {
      List<String> chunk = pairs.subList(from, Math.min(pairs.size(), from + 2 * REPAIR_CHUNK));
      List<String> args = new ArrayList<>(chunk.size() + 2);
      args.add(keys.wakeupChannel());
      args.add(origin + " q:" + queue);
      args.addAll(chunk);
      List<Object> result =
          connections.await(
              run(
                  LuaScript.REPAIR,
                  ScriptOutputType.MULTI,
                  new String[] {keys.due(queue), keys.claimed(queue)},
                  args.toArray(String[]::new)),
              "repair");
      for (int i = 1; i < result.size(); i++) {
        if ((Long) result.get(i) == 1) {
          written.add(chunk.get(2 * (i - 1)));
          queues.scheduled(queue, Long.parseLong(chunk.get(2 * (i - 1) + 1)));
        }
      }
    }
    if (!written.isEmpty()) {
      notifyWakeup(Instant.EPOCH);
    }
    return written;
  }

  @Override
  public QueueCounts queueCounts(QueueRef queue) {
    List<Object> result =
        connections.await(
            run(
                LuaScript.QUEUE_COUNTS,
                ScriptOutputType.MULTI,
                new String[] {
                  keys.due(queue), keys.inFlight(queue), keys.bucket(queue), keys.running(queue)
                }),
            "queue counts");
    String oldest = string(result.get(3));
    return new QueueCounts(
        (Long) result.get(0),
        (Long) result.get(1),
        (Long) result.get(2),
        oldest.isEmpty() ? Optional.empty() : Optional.of(instant(oldest)),
        (Long) result.get(4));
  }

  @Override
  public Set<String> repairAll(Map<String, Instant> dueById) {
    // id, score pairs per shard, sent as pipelined script calls of at most REPAIR_CHUNK pairs each.
    Map<Integer, List<String>> byShard = new LinkedHashMap<>();
    dueById.forEach(
        (id, due) -> {
          requireId(id);
          List<String> pairs =
              byShard.computeIfAbsent(keys.shardOf(id), shard -> new ArrayList<>());
          pairs.add(id);
          pairs.add(Long.toString(score(due)));
        });
    Map<List<String>, CompletableFuture<List<Object>>> replies = new LinkedHashMap<>();
    byShard.forEach(
        (shard, pairs) -> {
          for (int from = 0; from < pairs.size(); from += 2 * REPAIR_CHUNK) {
            List<String> chunk =
                pairs.subList(from, Math.min(pairs.size(), from + 2 * REPAIR_CHUNK));
            List<String> args = new ArrayList<>(chunk.size() + 2);
            args.add(keys.wakeupChannel());
            args.add(origin);
            args.addAll(chunk);
            replies.put(
                chunk,
                run(
                    LuaScript.REPAIR,
                    ScriptOutputType.MULTI,
                    new String[] {keys.due(shard), keys.claimed(shard)},
                    args.toArray(String[]::new)));
          }
        });
    Set<String> written = new LinkedHashSet<>();
    for (Map.Entry<List<String>, CompletableFuture<List<Object>>> reply : replies.entrySet()) {
      List<Object> result = connections.await(reply.getValue(), "repair");
      long published = (Long) result.get(0);
      if (published >= 0) {
        notifyWakeup(Instant.ofEpochMilli(published));
      }
      List<String> pairs = reply.getKey();
      for (int i = 1; i < result.size(); i++) {
        if ((Long) result.get(i) == 1) {
          written.add(pairs.get(2 * (i - 1)));
        }
      }
    }
    return written;
  }

  @Override
  public void cancel(String id) {
    requireId(id);
    int shard = keys.shardOf(id);
    connections.await(
        run(
            LuaScript.CANCEL,
            ScriptOutputType.INTEGER,
            new String[] {
              keys.due(shard), keys.inFlight(shard), keys.claimed(shard), keys.tokens(shard)
            },
            id),
        "cancel");
  }

  @Override
  public ClaimBatch claimDue(int max, Duration lease) {
    if (max < 1) {
      throw new IllegalArgumentException("max must be at least 1, got " + max);
    }
    if (lease.toMillis() < 1) {
      throw new IllegalArgumentException("lease must be at least 1 ms, got " + lease);
    }
    ensureSubscribed();
    int total = Math.min(max, MAX_CLAIM);
    int shards = keys.shards();
    // Each shard gets its part of the batch, so one round trip still claims at most max in all;
    // the remainder goes to shards in turn. A shard whose part is 0 is still asked (max 0) for its
    // clock and next entry, so no shard's entries are overlooked.
    // Queues due to be polled share the batch with the shards; a held queue is not among them.
    List<QueueGroups.Poll> polls = queues.toPoll(estimatedServerMillis());
    int parts = shards + polls.size();
    int firstWithExtra = Math.floorMod(claimRotation.getAndIncrement(), parts);
    List<CompletableFuture<List<Object>>> replies = new ArrayList<>(shards);
    long sentNanos = System.nanoTime();
    for (int shard = 0; shard < shards; shard++) {
      int quota =
          total / parts + (Math.floorMod(shard - firstWithExtra, parts) < total % parts ? 1 : 0);
      replies.add(
          run(
              LuaScript.CLAIM,
              ScriptOutputType.MULTI,
              new String[] {
                keys.due(shard),
                keys.inFlight(shard),
                keys.claimed(shard),
                keys.tokens(shard),
                keys.claimSequence(shard)
              },
              Integer.toString(quota),
              Long.toString(lease.toMillis()),
              claimer + ":" + shard));
    }
    Map<QueueRef, CompletableFuture<List<Object>>> queueReplies = new LinkedHashMap<>();
    Set<QueueRef> takingOver = new HashSet<>();
    for (int i = 0; i < polls.size(); i++) {
      QueueGroups.Poll poll = polls.get(i);
      int part = shards + i;
      int quota =
          total / parts + (Math.floorMod(part - firstWithExtra, parts) < total % parts ? 1 : 0);
      if (quota == 0) {
        queues.skipped(poll.queue());
        continue;
      }
      queueReplies.put(poll.queue(), claimQueue(poll, quota, lease));
      if (poll.takeOver()) {
        takingOver.add(poll.queue());
      }
    }
    ClaimBatch shardBatch = mergeClaims(replies, sentNanos);
    lastServerMillis = shardBatch.serverTime().toEpochMilli();
    lastServerNanos = sentNanos;
    return queueReplies.isEmpty() && queues.nextPoll().isEmpty()
        ? shardBatch
        : withQueues(shardBatch, queueReplies, takingOver, sentNanos);
  }

  private CompletableFuture<List<Object>> claimQueue(
      QueueGroups.Poll poll, int quota, Duration lease) {
    QueueRef queue = poll.queue();
    QueueLimits limits = poll.limits();
    return run(
        LuaScript.QUEUE_CLAIM,
        ScriptOutputType.MULTI,
        new String[] {
          keys.due(queue),
          keys.inFlight(queue),
          keys.claimed(queue),
          keys.tokens(queue),
          keys.claimSequence(queue),
          keys.bucket(queue),
          keys.running(queue),
          keys.released(queue)
        },
        Integer.toString(quota),
        Long.toString(lease.toMillis()),
        claimer + ":q:" + queue,
        limits.mode().argument(),
        limits.rate() == null ? "" : Double.toString(limits.rate()),
        Integer.toString(limits.burst()),
        limits.concurrency() == null ? "" : Integer.toString(limits.concurrency()),
        poll.watermark(),
        Integer.toString(QueueGroups.REPORT),
        poll.takeOver() ? "takeover" : "");
  }

  /** The shards' claims with the queues': their entries, their holds reported, the next poll. */
  private ClaimBatch withQueues(
      ClaimBatch shardBatch,
      Map<QueueRef, CompletableFuture<List<Object>>> replies,
      Set<QueueRef> takingOver,
      long sentNanos) {
    List<ClaimedEntry> entries = new ArrayList<>(shardBatch.entries());
    List<QueueHold> holds = new ArrayList<>();
    for (Map.Entry<QueueRef, CompletableFuture<List<Object>>> reply : replies.entrySet()) {
      QueueRef queue = reply.getKey();
      List<Object> result;
      try {
        result = connections.await(reply.getValue(), "claim");
      } catch (ScheduleUnavailableException e) {
        queues.skipped(queue);
        LOG.warn("Could not claim from queue {}: {}", queue, e.getMessage());
        continue;
      }
      if (takingOver.contains(queue)) {
        queues.tookOver(queue);
      }
      Instant time = time(result.get(0), result.get(1));
      String later = string(result.get(2));
      long held = (Long) result.get(3);
      String reason = string(result.get(4));
      String nextToken = string(result.get(5));
      String watermark = string(result.get(6));
      int reported = (int) (long) (Long) result.get(7);
      for (int i = 8; i < 8 + reported; i++) {
        holds.add(new QueueHold(string(result.get(i)), queue, reason));
      }
      for (int i = 8 + reported; i + 2 < result.size(); i += 3) {
        entries.add(
            new ClaimedEntry(
                string(result.get(i)),
                instant(string(result.get(i + 1))),
                time,
                string(result.get(i + 2)),
                sentNanos,
                Optional.of(queue)));
      }
      queues.polled(
          queue,
          held,
          reason,
          later.isEmpty() ? Optional.empty() : Optional.of((long) Double.parseDouble(later)),
          nextToken.isEmpty()
              ? Optional.empty()
              : Optional.of((long) Double.parseDouble(nextToken)),
          watermark,
          reported < QueueGroups.REPORT);
    }
    if (!holds.isEmpty()) {
      List<QueueHold> reported = List.copyOf(holds);
      for (Consumer<List<QueueHold>> listener : holdListeners) {
        try {
          listener.accept(reported);
        } catch (RuntimeException e) {
          LOG.warn("A queue hold listener failed", e);
        }
      }
    }
    Optional<Instant> nextDue = shardBatch.nextDue();
    Optional<Long> nextPoll = queues.nextPoll();
    if (nextPoll.isPresent()) {
      Instant poll = Instant.ofEpochMilli(nextPoll.get());
      nextDue = nextDue.isEmpty() || poll.isBefore(nextDue.get()) ? Optional.of(poll) : nextDue;
    }
    return new ClaimBatch(List.copyOf(entries), shardBatch.serverTime(), nextDue);
  }

  /** The Redis clock now, as followed from the last claim by the monotonic clock. */
  private long estimatedServerMillis() {
    return lastServerMillis + (System.nanoTime() - lastServerNanos) / 1_000_000;
  }

  private ClaimBatch mergeClaims(List<CompletableFuture<List<Object>>> replies, long sentNanos) {
    List<ClaimedEntry> entries = new ArrayList<>();
    Instant latestTime = null;
    Instant nextDue = null;
    // Shards may sit on nodes whose clocks differ slightly: the batch reports the clock of the
    // shard holding the next entry, so nextDue - serverTime is that entry's wait by its own clock.
    Instant nextDueShardTime = null;
    ScheduleUnavailableException failure = null;
    for (CompletableFuture<List<Object>> reply : replies) {
      List<Object> result;
      try {
        result = connections.await(reply, "claim");
      } catch (ScheduleUnavailableException e) {
        // Other shards' claims may have succeeded: hand those out rather than leave them in
        // flight until their lease expires. This shard is asked again on the next claim.
        failure = e;
        continue;
      }
      Instant time = time(result.get(0), result.get(1));
      latestTime = latestTime == null || time.isAfter(latestTime) ? time : latestTime;
      String next = string(result.get(2));
      if (!next.isEmpty() && (nextDue == null || instant(next).isBefore(nextDue))) {
        nextDue = instant(next);
        nextDueShardTime = time;
      }
      for (int i = 3; i + 2 < result.size(); i += 3) {
        entries.add(
            new ClaimedEntry(
                string(result.get(i)),
                instant(string(result.get(i + 1))),
                time,
                string(result.get(i + 2)),
                sentNanos));
      }
    }
    if (latestTime == null) {
      throw failure;
    }
    if (failure != null) {
      LOG.warn("Claimed from some shards only: {}", failure.getMessage());
    }
    Instant serverTime = nextDueShardTime != null ? nextDueShardTime : latestTime;
    return new ClaimBatch(List.copyOf(entries), serverTime, Optional.ofNullable(nextDue));
  }

  /** Acknowledges many claims with one script call per shard (and per {@link #ACK_CHUNK} ids). */
  @Override
  public void acknowledgeAll(Collection<ClaimedEntry> entries) {
    // id, token pairs: ack.lua removes a claim only if it is still the one that token names.
    Map<Integer, List<String>> byShard = new LinkedHashMap<>();
    Map<QueueRef, List<String>> byQueue = new LinkedHashMap<>();
    for (ClaimedEntry entry : entries) {
      List<String> pairs =
          entry.queue().isPresent()
              ? byQueue.computeIfAbsent(entry.queue().get(), queue -> new ArrayList<>())
              : byShard.computeIfAbsent(keys.shardOf(entry.id()), shard -> new ArrayList<>());
      pairs.add(entry.id());
      pairs.add(entry.token());
    }
    List<CompletableFuture<Long>> replies = new ArrayList<>();
    byQueue.forEach(
        (queue, pairs) -> {
          for (int from = 0; from < pairs.size(); from += 2 * ACK_CHUNK) {
            List<String> chunk = pairs.subList(from, Math.min(pairs.size(), from + 2 * ACK_CHUNK));
            replies.add(
                run(
                    LuaScript.ACK,
                    ScriptOutputType.INTEGER,
                    new String[] {keys.inFlight(queue), keys.claimed(queue), keys.tokens(queue)},
                    chunk.toArray(String[]::new)));
          }
        });
    byShard.forEach(
        (shard, pairs) -> {
          for (int from = 0; from < pairs.size(); from += 2 * ACK_CHUNK) {
            List<String> chunk = pairs.subList(from, Math.min(pairs.size(), from + 2 * ACK_CHUNK));
            replies.add(
                run(
                    LuaScript.ACK,
                    ScriptOutputType.INTEGER,
                    new String[] {keys.inFlight(shard), keys.claimed(shard), keys.tokens(shard)},
                    chunk.toArray(String[]::new)));
          }
        });
    for (CompletableFuture<Long> reply : replies) {
      connections.await(reply, "acknowledge");
    }
  }

  @Override
  public void release(ClaimedEntry entry, Instant retryAt) {
    Objects.requireNonNull(retryAt, "retryAt");
    long score = score(retryAt);
    if (entry.queue().isPresent()) {
      QueueRef queue = entry.queue().get();
      connections.await(
          run(
              LuaScript.RELEASE,
              ScriptOutputType.INTEGER,
              new String[] {
                keys.due(queue), keys.inFlight(queue), keys.claimed(queue), keys.tokens(queue)
              },
              entry.id(),
              Long.toString(score),
              keys.wakeupChannel(),
              origin + " q:" + queue,
              entry.token()),
          "release");
      queues.scheduled(queue, score);
      notifyWakeup(Instant.ofEpochMilli(score));
      return;
    }
    int shard = keys.shardOf(entry.id());
    Long result =
        connections.await(
            run(
                LuaScript.RELEASE,
                ScriptOutputType.INTEGER,
                new String[] {
                  keys.due(shard), keys.inFlight(shard), keys.claimed(shard), keys.tokens(shard)
                },
                entry.id(),
                Long.toString(score),
                keys.wakeupChannel(),
                origin,
                entry.token()),
            "release");
    if (result != null && result == 1) {
      notifyWakeup(Instant.ofEpochMilli(score));
    }
  }

  @Override
  public int requeueAllClaims() {
    // Each queue's claims go back, their slots freed, in its next claim (queue-claim.lua ARGV[10]):
    // the queues are known from the informers, which may not have told them all yet.
    queues.takeOverAll();
    int requeued = 0;
    for (int shard = 0; shard < keys.shards(); shard++) {
      long moved;
      do {
        moved =
            connections.<Long>await(
                run(
                    LuaScript.REQUEUE,
                    ScriptOutputType.INTEGER,
                    new String[] {
                      keys.due(shard), keys.inFlight(shard), keys.claimed(shard), keys.tokens(shard)
                    },
                    Integer.toString(MAX_CLAIM)),
                "requeue claims");
        requeued += (int) moved;
      } while (moved == MAX_CLAIM);
    }
    return requeued;
  }

  @Override
  public ScheduleCounts counts() {
    List<CompletableFuture<List<Object>>> replies = new ArrayList<>();
    for (int shard = 0; shard < keys.shards(); shard++) {
      replies.add(
          run(
              LuaScript.COUNTS,
              ScriptOutputType.MULTI,
              new String[] {keys.due(shard), keys.inFlight(shard)}));
    }
    long waiting = 0;
    long inFlight = 0;
    Duration oldestOverdue = Duration.ZERO;
    for (CompletableFuture<List<Object>> reply : replies) {
      List<Object> result = connections.await(reply, "counts");
      waiting += (Long) result.get(0);
      inFlight += (Long) result.get(1);
      String first = string(result.get(2));
      if (!first.isEmpty()) {
        Duration overdue = Duration.between(instant(first), time(result.get(3), result.get(4)));
        if (overdue.compareTo(oldestOverdue) > 0) {
          oldestOverdue = overdue;
        }
      }
    }
    return new ScheduleCounts(waiting, inFlight, oldestOverdue);
  }

  @Override
  public Map<String, Instant> waitingEntries() {
    Map<String, Instant> entries = new LinkedHashMap<>();
    for (int shard = 0; shard < keys.shards(); shard++) {
      scan(
          keys.due(shard),
          value -> entries.put(value.getValue(), Instant.ofEpochMilli((long) value.getScore())));
    }
    return entries;
  }

  @Override
  public List<String> inFlightIds() {
    Set<String> ids = new LinkedHashSet<>();
    for (int shard = 0; shard < keys.shards(); shard++) {
      scan(keys.inFlight(shard), value -> ids.add(value.getValue()));
    }
    return List.copyOf(ids);
  }

  /** ZSCAN in pages: never one huge reply, and every member present throughout is seen. */
  private void scan(String key, Consumer<ScoredValue<String>> sink) {
    RedisClusterAsyncCommands<String, String> commands = connections.commands();
    ScanCursor cursor = ScanCursor.INITIAL;
    ScanArgs page = ScanArgs.Builder.limit(SCAN_PAGE);
    do {
      ScoredValueScanCursor<String> result =
          connections.await(commands.zscan(key, cursor, page), "ZSCAN " + key);
      result.getValues().forEach(sink);
      cursor = result;
    } while (!cursor.isFinished());
  }

  @Override
  public String serverIdentity() {
    return connections.serverIdentity();
  }

  /**
   * Calls {@code listener} with the due time of every entry that becomes the earliest of its shard:
   * at once for this instance's own writes, through the pub/sub channel for other processes'. The
   * subscription is made now if Redis answers, else on a later claim.
   */
  @Override
  public AutoCloseable onWakeup(Consumer<Instant> listener) {
    wakeupListeners.add(Objects.requireNonNull(listener));
    ensureSubscribed();
    return () -> wakeupListeners.remove(listener);
  }

  private void ensureSubscribed() {
    if (wakeupListeners.isEmpty() || connections.subscribed()) {
      return;
    }
    try {
      connections.subscribe(keys.wakeupChannel(), this::onWakeupMessage);
      subscriptionFailureLogged = false;
    } catch (ScheduleUnavailableException e) {
      if (!subscriptionFailureLogged) {
        subscriptionFailureLogged = true;
        LOG.warn(
            "Cannot subscribe to {} yet, entries written by other processes wake the poller only by its "
                + "idle cap until then: {}",
            keys.wakeupChannel(),
            e.getMessage());
      }
    }
  }

  private void onWakeupMessage(String message) {
    // "<score> <origin>", or "<score> <origin> q:<namespace>/<queue>" for an entry of a queue.
    String[] parts = message.split(" ", 3);
    if (parts.length > 1 && parts[1].equals(origin)) {
      return;
    }
    try {
      long score = Long.parseLong(parts[0]);
      if (parts.length == 3 && parts[2].startsWith("q:")) {
        QueueRef.parse(parts[2].substring(2)).ifPresent(queue -> queues.scheduled(queue, score));
      }
      notifyWakeup(Instant.ofEpochMilli(score));
    } catch (NumberFormatException e) {
      LOG.debug("Ignoring malformed wake-up message on {}", keys.wakeupChannel());
    }
  }

  private void notifyWakeup(Instant due) {
    for (Consumer<Instant> listener : wakeupListeners) {
      try {
        listener.accept(due);
      } catch (RuntimeException e) {
        LOG.warn("A wake-up listener failed", e);
      }
    }
  }

  @Override
  public void close() {
    wakeupListeners.clear();
    connections.close();
  }

  /**
   * EVALSHA, and on NOSCRIPT (flushed cache, restart, failover) exactly one EVAL, which reloads it.
   */
  private <T> CompletableFuture<T> run(
      LuaScript script, ScriptOutputType type, String[] scriptKeys, String... args) {
    RedisClusterAsyncCommands<String, String> commands = connections.commands();
    CompletableFuture<T> first =
        commands.<T>evalsha(script.sha1(), type, scriptKeys, args).toCompletableFuture();
    return first.exceptionallyCompose(
        error -> {
          if (!isNoScript(error)) {
            return CompletableFuture.failedFuture(error);
          }
          noScriptFallbacks.incrementAndGet();
          return commands.<T>eval(script.source(), type, scriptKeys, args).toCompletableFuture();
        });
  }

  private static boolean isNoScript(Throwable error) {
    Throwable cause =
        error instanceof CompletionException && error.getCause() != null ? error.getCause() : error;
    return cause instanceof RedisNoScriptException
        || (cause.getMessage() != null && cause.getMessage().startsWith("NOSCRIPT"));
  }

  /** Due times become whole ms rounded up, so an entry is never due before its Instant. */
  static long score(Instant instant) {
    long millis = instant.toEpochMilli();
    return instant.getNano() % 1_000_000 == 0 ? millis : millis + 1;
  }

  private static Instant instant(String score) {
    return Instant.ofEpochMilli((long) Double.parseDouble(score));
  }

  private static Instant time(Object seconds, Object micros) {
    return Instant.ofEpochSecond(
        Long.parseLong(string(seconds)), Long.parseLong(string(micros)) * 1_000);
  }

  private static String string(Object value) {
    return value == null ? "" : value.toString();
  }

  private static void requireId(String id) {
    if (id == null || id.isEmpty()) {
      throw new IllegalArgumentException("a schedule entry needs a non-empty id");
    }
  }
}
