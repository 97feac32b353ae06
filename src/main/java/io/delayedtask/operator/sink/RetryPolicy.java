package io.delayedtask.operator.sink;

import java.time.Duration;
import java.util.Objects;
import java.util.Optional;

/**
 * The one place that says which delivery results are retried and how long the next attempt waits
 * (docs/reference.md; the shape of Knative's {@code pkg/kncloudevents/retries.go}). Pure functions.
 */
public final class RetryPolicy {
  /** The longest wait a Retry-After header can ask for, and the longest backoff at all. */
  public static final Duration MAX_RETRY_AFTER = Duration.ofMinutes(10);

  /**
   * Where a backoff saturates: far beyond any retry anyone waits for, still addable to an Instant.
   */
  static final Duration LONGEST = Duration.ofDays(365L * 1000);

  private RetryPolicy() {}

  /** What an attempt's result means for the task. */
  public enum Verdict {
    /** 2xx: delivered. */
    DELIVERED,
    /** No answer, 404, 408, 409, 425, 429, 5xx: try again if retries are left. */
    RETRY,
    /** Anything else (other 4xx, 3xx, 1xx, a forbidden address): failed for good. */
    FAIL
  }

  public enum Backoff {
    LINEAR,
    EXPONENTIAL
  }

  public static Verdict verdict(DeliveryResult result) {
    if (result instanceof DeliveryResult.Answered answered) {
      return verdict(answered.status());
    }
    if (result instanceof DeliveryResult.NoAnswer) {
      // Refused, reset, timed out: the receiver may be restarting; the same ce-id makes a repeat
      // harmless.
      return Verdict.RETRY;
    }
    // Forbidden: the destination resolves to an address we never reach; asking again resolves the
    // same way.
    return Verdict.FAIL;
  }

  private static Verdict verdict(int status) {
    if (status >= 200 && status < 300) {
      return Verdict.DELIVERED;
    }
    if (status >= 500 && status < 600) {
      return Verdict.RETRY;
    }
    return switch (status) {
      // 404: a receiver not yet routed (rolling out); 408/425/429: "later"; 409: a conflict that
      // may clear.
      case 404, 408, 409, 425, 429 -> Verdict.RETRY;
      // 3xx (redirects are never followed), 1xx, other 4xx: the request itself is wrong for this
      // receiver.
      default -> Verdict.FAIL;
    };
  }

  /**
   * How long attempt {@code failedAttempt + 1} waits after attempt {@code failedAttempt} (1-based)
   * failed: {@code delay × n} (linear) or {@code delay × 2^(n-1)} (exponential), and at least what
   * {@code retryAfter} asks, that ask capped at {@link #MAX_RETRY_AFTER}. The computed backoff
   * itself is not capped (the contract sets no bound) but saturates instead of overflowing:
   * exponential 1s at attempt 100 is "practically never" ({@link #LONGEST}), not a negative number
   * or an Instant out of range.
   */
  public static Duration backoff(
      Backoff policy, Duration delay, int failedAttempt, Optional<Duration> retryAfter) {
    Objects.requireNonNull(policy, "policy");
    Objects.requireNonNull(retryAfter, "retryAfter");
    if (failedAttempt < 1) {
      throw new IllegalArgumentException("failedAttempt is 1-based, got " + failedAttempt);
    }
    if (delay.isNegative()) {
      throw new IllegalArgumentException("delay must not be negative, got " + delay);
    }
    long factor =
        switch (policy) {
          case LINEAR -> failedAttempt;
          // Beyond 2^62 the shift would wrap; 2^62 times any delay of a nanosecond or more
          // saturates anyway.
          case EXPONENTIAL -> 1L << Math.min(failedAttempt - 1, 62);
        };
    Duration wait = saturatingTimes(delay, factor);
    Duration asked =
        retryAfter
            .filter(d -> !d.isNegative())
            .map(d -> min(d, MAX_RETRY_AFTER))
            .orElse(Duration.ZERO);
    return max(wait, asked);
  }

  /** {@code delay × factor}, at most {@link #LONGEST} (so also when the product would overflow). */
  private static Duration saturatingTimes(Duration delay, long factor) {
    try {
      return min(delay.multipliedBy(factor), LONGEST);
    } catch (ArithmeticException overflow) {
      return LONGEST;
    }
  }

  private static Duration min(Duration a, Duration b) {
    return a.compareTo(b) <= 0 ? a : b;
  }

  private static Duration max(Duration a, Duration b) {
    return a.compareTo(b) >= 0 ? a : b;
  }
}
