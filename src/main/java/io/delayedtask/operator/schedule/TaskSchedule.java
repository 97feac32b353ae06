package io.delayedtask.operator.schedule;

import java.time.Duration;
import java.time.Instant;
import java.util.Collection;
import java.util.List;
import java.util.Map;
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
   * otherwise, since a claim or a later (retry) score appeared after the caller looked. Returns
   * the ids it wrote.
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

  /** Puts a claimed entry back to wait until {@code retryAt}, a Redis-clock instant (retry with backoff). */
  void release(ClaimedEntry entry, Instant retryAt);

  /**
   * Returns every claim to the due set at the due time it was claimed for, lease or not. For a
   * poller that has just become the only one (a new leader): the claims in Redis are its
   * predecessor's, and waiting out their lease would make those tasks late by it. A predecessor
   * that is still alive (paused) and finishes a firing later does no harm: firing is idempotent.
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
   * Calls {@code listener} with the due time of an entry that may be earlier than any known so
   * far (scheduled or released here or, where supported, by another process). Closing the returned
   * handle removes the listener. The default schedule never calls it.
   */
  default AutoCloseable onWakeup(Consumer<Instant> listener) {
    return () -> {};
  }

  @Override
  void close();
}
