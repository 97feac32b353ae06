package io.delayedtask.operator.reconcile;

import io.delayedtask.operator.api.v1alpha1.DelayedTask;
import io.delayedtask.operator.leader.ScheduleIds;
import io.delayedtask.operator.schedule.ClaimedEntry;
import io.delayedtask.operator.schedule.QueueRef;
import java.time.Instant;
import java.util.Optional;

/**
 * A claim of a task's schedule entry for a decider test: the entry of the task, claimed for a due
 * time at a time (Redis clock), from shard 0 with the token {@code op:0:1} unless the test puts it
 * in a queue.
 */
final class ClaimBuilder {
  private final DelayedTask task;
  private Instant due;
  private Instant claimedAt;
  private String token = "op:0:1";
  private Optional<QueueRef> queue = Optional.empty();

  private ClaimBuilder(DelayedTask task) {
    this.task = task;
  }

  /** A claim of {@code task}'s entry; {@link #due} and {@link #claimedAt} are to be named. */
  static ClaimBuilder claimOf(DelayedTask task) {
    return new ClaimBuilder(task);
  }

  /** The due time the entry was claimed for. */
  ClaimBuilder due(Instant due) {
    this.due = due;
    return this;
  }

  /** When it was claimed, on Redis's clock. */
  ClaimBuilder claimedAt(Instant claimedAt) {
    this.claimedAt = claimedAt;
    return this;
  }

  /** Claimed from {@code queue}'s key group, with that claim's token. */
  ClaimBuilder inQueue(QueueRef queue, String token) {
    this.queue = Optional.of(queue);
    this.token = token;
    return this;
  }

  ClaimedEntry build() {
    return new ClaimedEntry(
        ScheduleIds.idOf(task), due, claimedAt, token, System.nanoTime(), queue);
  }
}
