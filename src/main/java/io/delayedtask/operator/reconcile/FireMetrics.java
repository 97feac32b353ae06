package io.delayedtask.operator.reconcile;

import io.delayedtask.operator.decision.ClaimOutcome;
import io.delayedtask.operator.decision.DeliveryCount;
import io.micrometer.core.instrument.Counter;
import io.micrometer.core.instrument.MeterRegistry;
import io.micrometer.core.instrument.Timer;
import java.time.Duration;
import java.util.EnumMap;
import java.util.Locale;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;

/**
 * What firing reports on /metrics: fire lag, what became of each due time ({@code
 * delayedtask_due_times_total{outcome}}), and the claims that ended without an outcome ({@code
 * delayedtask_fire_skipped_total{reason}}). The two counters are apart so that a rate of firings is
 * not inflated by retries, stale entries and clock-skew hand-backs, which can repeat many times for
 * one due time.
 */
public class FireMetrics {
  public static final String LAG = "delayedtask.fire.lag";

  /**
   * Prometheus: {@code delayedtask_due_times_total{outcome=fired|job_created|missed|failed}}: due
   * times settled, by what became of them (missed and failed ones fired nothing, so the counter is
   * not named after firings).
   */
  public static final String DUE_TIMES = "delayedtask.due.times";

  /**
   * Prometheus: {@code delayedtask_fired_total{outcome}}, the same counts under the name of 0.1
   * pre-releases. Deprecated: kept, equal to {@link #DUE_TIMES}, until 0.2.0 so that dashboards and
   * alerts can move (CHANGELOG.md, docs/operations.md).
   */
  public static final String FIRED = "delayedtask.fired";

  /**
   * Prometheus: {@code
   * delayedtask_fire_skipped_total{reason=retry|stale|clock_skew|admission_policy_missing}}.
   */
  public static final String SKIPPED = "delayedtask.fire.skipped";

  /**
   * Prometheus: {@code delayedtask_deliveries_total{outcome=delivered|retry|failed|dead_lettered}}.
   */
  public static final String DELIVERIES = "delayedtask.deliveries";

  private final MeterRegistry registry;
  private final Timer lag;
  private final Map<ClaimOutcome, Counter> counters = new ConcurrentHashMap<>();
  private final Map<ClaimOutcome, Counter> deprecatedCounters = new ConcurrentHashMap<>();
  private final Map<DeliveryCount, Counter> deliveries = new EnumMap<>(DeliveryCount.class);

  public FireMetrics(MeterRegistry registry) {
    this.registry = registry;
    this.lag =
        Timer.builder(LAG)
            .description("Time from a task's due time to its claim by the poller (Redis clock)")
            .publishPercentileHistogram()
            .minimumExpectedValue(Duration.ofMillis(1))
            .maximumExpectedValue(Duration.ofMinutes(5))
            .register(registry);
    // Every outcome from the start, at 0: Prometheus' increase() cannot see a counter's first
    // increment when the series only appears with it, and the failed-firings alert needs that one.
    for (ClaimOutcome outcome : ClaimOutcome.values()) {
      counters.computeIfAbsent(outcome, this::counter);
      if (outcome.isFinal()) {
        deprecatedCounters.computeIfAbsent(outcome, this::deprecatedCounter);
      }
    }
    for (DeliveryCount delivery : DeliveryCount.values()) {
      deliveries.put(
          delivery,
          Counter.builder(DELIVERIES)
              .description(
                  "Sink delivery attempts by outcome: delivered, retry, failed, dead_lettered")
              .tag("outcome", tag(delivery))
              .register(registry));
    }
  }

  public void delivery(DeliveryCount outcome) {
    deliveries.get(outcome).increment();
  }

  public void lag(Duration duration) {
    lag.record(duration.isNegative() ? Duration.ZERO : duration);
  }

  public void outcome(ClaimOutcome outcome) {
    counters.computeIfAbsent(outcome, this::counter).increment();
    if (outcome.isFinal()) {
      deprecatedCounters.computeIfAbsent(outcome, this::deprecatedCounter).increment();
    }
  }

  private Counter deprecatedCounter(ClaimOutcome outcome) {
    return Counter.builder(FIRED)
        .description("Deprecated, until 0.2.0: delayedtask_due_times_total under its former name")
        .tag("outcome", tag(outcome))
        .register(registry);
  }

  private Counter counter(ClaimOutcome outcome) {
    if (outcome.isFinal()) {
      return Counter.builder(DUE_TIMES)
          .description("Due times settled, by outcome: fired, job_created, missed, failed")
          .tag("outcome", tag(outcome))
          .register(registry);
    }
    return Counter.builder(SKIPPED)
        .description(
            "Claims that ended without an outcome, by reason: retry, stale, clock_skew, admission_policy_missing")
        .tag("reason", tag(outcome))
        .register(registry);
  }

  /** The Prometheus label of an outcome: its name in lower case. */
  static String tag(Enum<?> outcome) {
    return outcome.name().toLowerCase(Locale.ROOT);
  }
}
