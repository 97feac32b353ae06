package io.delayedtask.operator.schedule;

import java.util.Objects;

/**
 * A due entry its queue holds, and why: {@code QueuePaused}, {@code QueueMissing}, {@code
 * RateLimited} or {@code ConcurrencyLimited} (queue-claim.lua's reasons). Reported once per entry
 * and reason, so the operator marks the task Queued once per change.
 */
public record QueueHold(String id, QueueRef queue, String reason) {
  public static final String QUEUE_PAUSED = "QueuePaused";
  public static final String QUEUE_MISSING = "QueueMissing";
  public static final String RATE_LIMITED = "RateLimited";
  public static final String CONCURRENCY_LIMITED = "ConcurrencyLimited";

  public QueueHold {
    Objects.requireNonNull(id, "id");
    Objects.requireNonNull(queue, "queue");
    Objects.requireNonNull(reason, "reason");
  }
}
