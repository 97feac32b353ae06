package io.delayedtask.operator.schedule;

import java.time.Instant;
import java.util.Objects;

/**
 * An entry this process claimed: its id, where it waited (a shard, or the key group of {@code
 * queue}), the due time it was claimed for, when (Redis clock), the claim's token, and the local
 * monotonic time ({@link System#nanoTime()}) just before the claim was sent, which is what lets
 * {@link #redisClockNow()} follow the Redis clock without asking it again. Acknowledging or
 * releasing the entry acts only while the token is still the claim's: once the lease ran out and
 * another poller claimed it again, even for the same due time, this claim can no longer touch it.
 */
public record ClaimedEntry(
    String id,
    Instant due,
    Instant claimedAt,
    String token,
    long sentNanos,
    java.util.Optional<QueueRef> queue) {
  public ClaimedEntry {
    Objects.requireNonNull(id, "id");
    Objects.requireNonNull(due, "due");
    Objects.requireNonNull(claimedAt, "claimedAt");
    Objects.requireNonNull(token, "token");
    Objects.requireNonNull(queue, "queue");
  }

  /** A claim from a shard of the schedule (no queue). */
  public ClaimedEntry(String id, Instant due, Instant claimedAt, String token, long sentNanos) {
    this(id, due, claimedAt, token, sentNanos, java.util.Optional.empty());
  }

  /**
   * The Redis clock now, never behind it: {@code claimedAt} plus the local monotonic time since the
   * claim was sent. Redis read its clock after the claim left this process, so this errs late by at
   * most the claim's round trip. A time derived from it (a Retry-After, a backoff) is never early;
   * one derived from when the reconcile began would be early by the claim-to-reconcile latency.
   */
  public Instant redisClockNow() {
    return claimedAt.plusNanos(System.nanoTime() - sentNanos);
  }
}
