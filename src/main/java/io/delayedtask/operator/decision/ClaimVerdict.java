package io.delayedtask.operator.decision;

import java.time.Duration;
import java.time.Instant;
import java.util.Optional;

/**
 * What becomes of the claim a reconcile was woken by; each carries the outcome /metrics counts it
 * as (none: not counted).
 */
public sealed interface ClaimVerdict {
  /**
   * Done with this due time (fired, missed, failed) or the claim is stale: acknowledge it. {@code
   * lag}: from the due time to the claim that fired it, when this firing did.
   */
  record Settle(ClaimOutcome outcome, Optional<Duration> lag) implements ClaimVerdict {
    public static Settle stale() {
      return new Settle(ClaimOutcome.STALE, Optional.empty());
    }

    public static Settle as(ClaimOutcome outcome) {
      return new Settle(outcome, Optional.empty());
    }

    public static Settle fired(ClaimOutcome outcome, Instant due, Instant claimedAt) {
      return new Settle(outcome, Optional.of(Duration.between(due, claimedAt)));
    }
  }

  /**
   * Not yet: put it back to wait until {@code at} (the due time moved, the clocks disagree, a
   * delivery attempt's safety net or one in flight).
   */
  record HandBack(Instant at, Optional<ClaimOutcome> outcome) implements ClaimVerdict {
    public static HandBack until(Instant at) {
      return new HandBack(at, Optional.empty());
    }
  }

  /** A transient failure: put it back with exponential backoff. */
  record Backoff(String why) implements ClaimVerdict {}
}
