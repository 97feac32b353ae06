package io.delayedtask.operator.schedule;

import java.time.Duration;
import java.time.Instant;
import java.util.Collection;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import java.util.function.Consumer;

/**
 * The Redis schedule as the rest of the operator sees it: entries (an opaque id and a due time)
 * that become due by the Redis server's clock and are claimed with a lease.
 *
 * <p>Ids are chosen by the caller; the operator uses "namespace/name/uid". Every method may throw
 * {@link ScheduleUnavailableException} when Redis cannot be reached; nothing is lost then, the
 * caller retries.
 */
public interface TaskSchedule extends AutoCloseable {

  /** Adds the entry or moves it to a new due time; wakes the poller when it is the new earliest. */
  void schedule(String id, Instant due);

  /**
   * The resync's write, for many entries in few round trips: adds each entry that is neither
   * waiting nor claimed, or moves it to its due time if it waits scored earlier; leaves it alone
   * otherwise, since a claim or a later (retry) score appeared after the caller looked. Returns the
   * ids it wrote.
   */
  Set<String> repairAll(Map<String, Instant> dueById);

  /** Removes the entry, whether waiting or claimed. Idempotent. */
  void cancel(String id);

  /**
   * Moves at most {@code max} due entries (score at or before the Redis clock) into flight. It may
   * return fewer while more are due (a sharded schedule splits max over its shards): {@link
   * ClaimBatch#moreDue()} then says to claim again.
   */
  ClaimBatch claimDue(int max, Duration lease);

  /** Removes claimed entries for good (their effect is durable), in few commands. */
  void acknowledgeAll(Collection<ClaimedEntry> entries);

  /**
   * Puts a claimed entry back to wait until {@code retryAt}, a Redis-clock instant (retry with
   * backoff).
   */
  void release(ClaimedEntry entry, Instant retryAt);

  /**
   * Returns every claim to the due set at the due time it was claimed for, lease or not. For a
   * poller that has just become the only one (a new leader): the claims in Redis are its
   * predecessor's, and waiting out their lease would make those tasks late by it. A predecessor
   * that is still alive (paused) and finishes a firing later does no harm: firing is idempotent. A
   * queue's claims go back on this poller's first claim of the queue, with their concurrency slots
   * freed (a claim made again takes its slot again; a Job it created keeps it). Returns the shards'
   * claims requeued.
   */
  int requeueAllClaims();

  /** Waiting and in-flight counts and the age of the oldest overdue entry. */
  ScheduleCounts counts();

  /** Every waiting entry with its due time (for the resync against the DelayedTasks). */
  Map<String, Instant> waitingEntries();

  /** Ids of every entry in flight (claimed, not yet acknowledged). */
  List<String> inFlightIds();

  /**
   * The identity of the Redis server(s) behind the schedule (run_id, for a cluster the sorted
   * run_ids of the masters): when it changes, Redis restarted or failed over and the schedule is
   * rebuilt from the DelayedTasks.
   */
  String serverIdentity();

  /**
   * Calls {@code listener} with the due time of an entry that may be earlier than any known so far
   * (scheduled or released here or, where supported, by another process). Closing the returned
   * handle removes the listener. The default schedule never calls it.
   */
  default AutoCloseable onWakeup(Consumer<Instant> listener) {
    return () -> {};
  }

  // Queues (package-info, "Queues"): a task that names a DelayedTaskQueue waits in that queue's key
  // group, and is claimed within the queue's limits. A schedule without queues refuses these.

  /**
   * Adds or moves the entry in {@code into}'s key group (and removes it from its shard), or, with
   * {@code into} empty, in its shard; either way removes it from {@code leaving}'s group, if given
   * (a fire-now bypasses the queue the task names).
   */
  default void schedule(
      String id, Instant due, Optional<QueueRef> into, Optional<QueueRef> leaving) {
    if (into.isPresent() || leaving.isPresent()) {
      throw new UnsupportedOperationException("this schedule has no queues");
    }
    schedule(id, due);
  }

  /**
   * Removes the entry from its shard and from {@code queue}'s group (with its concurrency slot).
   */
  default void cancel(String id, Optional<QueueRef> queue) {
    cancel(id);
  }

  /** Removes the entry from {@code queue}'s group only (with its concurrency slot). */
  default void cancelQueued(String id, QueueRef queue) {
    throw new UnsupportedOperationException("this schedule has no queues");
  }

  /**
   * A queue's dispatches in flight (its concurrency slots taken): id and when the dispatch began.
   */
  default Map<String, Instant> runningEntries(QueueRef queue) {
    return Map.of();
  }

  /** The dispatches of these ids in {@code queue} ended: their concurrency slots are free. */
  default void freeSlots(QueueRef queue, Collection<String> ids) {
    throw new UnsupportedOperationException("this schedule has no queues");
  }

  /**
   * A DelayedTaskQueue's limits, created or changed (or {@link QueueLimits#RELEASED} once deleted).
   */
  default void queueLimits(QueueRef queue, QueueLimits limits) {}

  /** Every DelayedTaskQueue has been listed: a queue not among them is missing. */
  default void queueLimitsKnown() {}

  /** Tasks wait in these queues: their groups are polled and resynced from now on. */
  default void knowQueues(Collection<QueueRef> queues) {}

  /** The queues whose groups are polled. */
  default List<QueueRef> knownQueues() {
    return List.of();
  }

  /** Calls {@code listener} with the due entries a queue holds, once per entry and reason. */
  default AutoCloseable onQueueHolds(Consumer<List<QueueHold>> listener) {
    return () -> {};
  }

  /** Every waiting entry of a queue's group with its score. */
  default Map<String, Instant> waitingEntries(QueueRef queue) {
    return Map.of();
  }

  /** Ids of a queue's claims in flight. */
  default List<String> inFlightIds(QueueRef queue) {
    return List.of();
  }

  /** {@link #repairAll(Map)} for the entries of one queue's group. */
  default Set<String> repairAll(QueueRef queue, Map<String, Instant> dueById) {
    throw new UnsupportedOperationException("this schedule has no queues");
  }

  /** A snapshot of a queue for its status and gauges. */
  default QueueCounts queueCounts(QueueRef queue) {
    throw new UnsupportedOperationException("this schedule has no queues");
  }

  @Override
  void close();
}
