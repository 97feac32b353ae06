package io.delayedtask.operator.sink;

import io.delayedtask.operator.api.v1alpha1.DeliverySpec;
import io.delayedtask.operator.task.time.Durations;
import java.time.Duration;

/**
 * A sink task's {@code spec.delivery} with the defaults applied (docs/reference.md: retry 3,
 * exponential, 1s, timeout 10s). The spec was validated first, so every value parses.
 *
 * @param retry retries after the first attempt, per target
 * @param backoff linear or exponential
 * @param delay the base wait
 * @param timeout one attempt's time limit
 */
record DeliverySettings(int retry, RetryPolicy.Backoff backoff, Duration delay, Duration timeout) {
  static final Duration DEFAULT_DELAY = Duration.ofSeconds(1);
  static final Duration DEFAULT_TIMEOUT = Duration.ofSeconds(10);

  static DeliverySettings of(DeliverySpec spec) {
    if (spec == null) {
      return new DeliverySettings(
          DeliverySpec.DEFAULT_RETRY,
          RetryPolicy.Backoff.EXPONENTIAL,
          DEFAULT_DELAY,
          DEFAULT_TIMEOUT);
    }
    return new DeliverySettings(
        spec.getRetry() == null ? DeliverySpec.DEFAULT_RETRY : spec.getRetry(),
        "linear".equals(spec.getBackoffPolicy())
            ? RetryPolicy.Backoff.LINEAR
            : RetryPolicy.Backoff.EXPONENTIAL,
        parseOr(spec.getBackoffDelay(), DEFAULT_DELAY),
        parseOr(spec.getTimeout(), DEFAULT_TIMEOUT));
  }

  /** Attempts one target gets: the first and its retries. */
  int attemptsPerTarget() {
    return retry + 1;
  }

  private static Duration parseOr(String text, Duration fallback) {
    if (text == null) {
      return fallback;
    }
    try {
      return Durations.parse(text);
    } catch (Durations.BadDuration e) {
      return fallback; // the validator refused it already; not reached for a valid task
    }
  }
}
