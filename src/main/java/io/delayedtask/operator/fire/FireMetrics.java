package io.delayedtask.operator.fire;

import io.micrometer.core.instrument.Counter;
import io.micrometer.core.instrument.MeterRegistry;
import io.micrometer.core.instrument.Timer;
import java.time.Duration;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;

/** What firing reports on /metrics: fire lag, and claims handled by outcome. */
public class FireMetrics {
  public static final String LAG = "delayedtask.fire.lag";
  public static final String HANDLED = "delayedtask.fired";

  private final MeterRegistry registry;
  private final Timer lag;
  private final Map<Outcome, Counter> outcomes = new ConcurrentHashMap<>();

  /** What became of a claimed entry. */
  public enum Outcome {
    FIRED, JOB_CREATED, MISSED, FAILED, STALE, RETRY, CLOCK_SKEW;

    String tag() {
      return name().toLowerCase(java.util.Locale.ROOT);
    }
  }

  public FireMetrics(MeterRegistry registry) {
    this.registry = registry;
    this.lag = Timer.builder(LAG)
        .description("Time from a task's due time to its claim by the poller (Redis clock)")
        .publishPercentileHistogram()
        .minimumExpectedValue(Duration.ofMillis(1))
        .maximumExpectedValue(Duration.ofMinutes(5))
        .register(registry);
    // Every outcome from the start, at 0: Prometheus' increase() cannot see a counter's first
    // increment when the series only appears with it, and the failed-firings alert needs that one.
    for (Outcome outcome : Outcome.values()) {
      counter(outcome);
    }
  }

  public void lag(Duration duration) {
    lag.record(duration.isNegative() ? Duration.ZERO : duration);
  }

  public void outcome(Outcome outcome) {
    counter(outcome).increment();
  }

  private Counter counter(Outcome outcome) {
    return outcomes.computeIfAbsent(outcome, o -> Counter.builder(HANDLED)
        .description("Claimed schedule entries by outcome")
        .tag("outcome", o.tag())
        .register(registry));
  }
}
