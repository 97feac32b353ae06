package io.delayedtask.operator.schedule;

import java.time.Instant;
import java.util.Objects;

/** The handler's verdict on a claim: acknowledge it (done for good) or retry it at a later time. */
public sealed interface Disposition {

  static Disposition acknowledge() {
    return Acknowledge.INSTANCE;
  }

  static Disposition retryAt(Instant when) {
    return new RetryAt(when);
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
}
