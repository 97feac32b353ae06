package io.delayedtask.operator.schedule;

import java.time.Instant;
import java.util.Objects;

/**
 * The handler's verdict on a claim: acknowledge it (done for good), retry it at a given time, or
 * retry it with the poller's one backoff for claims ({@link SchedulePoller.Settings#retryBase()}).
 */
public sealed interface Disposition {

  static Disposition acknowledge() {
    return Acknowledge.INSTANCE;
  }

  /**
   * Wait until {@code when}, a Redis-clock instant (a due time, or the claim's {@code claimedAt}
   * plus a delay).
   */
  static Disposition retryAt(Instant when) {
    return new RetryAt(when);
  }

  /**
   * A transient failure: the poller puts the entry back at {@code claimedAt} plus its backoff for
   * this entry.
   */
  static Disposition backoff(String why) {
    return new Backoff(why);
  }

  /** The effect is durable (or the entry is stale): remove the claim. */
  enum Acknowledge implements Disposition {
    INSTANCE
  }

  /** Not done yet: put the entry back to wait until {@code when}. */
  record RetryAt(Instant when) implements Disposition {
    public RetryAt {
      Objects.requireNonNull(when);
    }
  }

  /** Not done, and failing: put the entry back with backoff; {@code why} is logged. */
  record Backoff(String why) implements Disposition {
    public Backoff {
      Objects.requireNonNull(why);
    }
  }
}
