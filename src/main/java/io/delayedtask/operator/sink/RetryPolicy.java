package io.delayedtask.operator.sink;

import java.time.Duration;
import java.util.Optional;

/**
 * The one place that says which delivery results are retried and how long the next attempt waits
 * (shared/API.md: Knative's retries.go shape). Pure functions; the helper fills them in.
 */
public final class RetryPolicy {
  /** The longest wait a Retry-After header can ask for. */
  public static final Duration MAX_RETRY_AFTER = Duration.ofMinutes(10);

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

  public enum Backoff { LINEAR, EXPONENTIAL }

  public static Verdict verdict(DeliveryResult result) {
    throw new UnsupportedOperationException("to be written");
  }

  /**
   * How long attempt {@code failedAttempt + 1} waits after attempt {@code failedAttempt} (1-based)
   * failed: {@code delay × n} (linear) or {@code delay × 2^(n-1)} (exponential), and at least what
   * {@code retryAfter} asks, capped at {@link #MAX_RETRY_AFTER}.
   */
  public static Duration backoff(Backoff policy, Duration delay, int failedAttempt, Optional<Duration> retryAfter) {
    throw new UnsupportedOperationException("to be written");
  }
}
