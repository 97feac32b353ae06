package io.delayedtask.operator.reconcile;

import io.micrometer.core.instrument.Counter;
import io.micrometer.core.instrument.MeterRegistry;
import io.micrometer.core.instrument.Timer;
import java.time.Duration;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;

/**
 * What firing reports on /metrics: fire lag, what became of each due time ({@code
 * delayedtask_due_times_total{outcome}}), and the claims that ended without an outcome ({@code
 * delayedtask_fire_skipped_total{reason}}). The two counters are apart so that a rate of firings
 * is not inflated by retries, stale entries and clock-skew hand-backs, which can repeat many times
 * for one due time.
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
  /** Prometheus: {@code delayedtask_fire_skipped_total{reason=retry|stale|clock_skew|admission_policy_missing}}. */
  public static final String SKIPPED = "delayedtask.fire.skipped";

  /** Prometheus: {@code delayedtask_deliveries_total{outcome=delivered|retry|failed|dead_lettered}}. */
  public static final String DELIVERIES = "delayedtask.deliveries";

  private final MeterRegistry registry;
  private final Timer lag;
  private final Map<Outcome, Counter> counters = new ConcurrentHashMap<>();
  private final Map<Outcome, Counter> deprecatedCounters = new ConcurrentHashMap<>();
  private final Map<Delivery, Counter> deliveries = new java.util.EnumMap<>(Delivery.class);

  /** What became of one sink delivery attempt. */
  public enum Delivery {
    DELIVERED, RETRY, FAILED, DEAD_LETTERED;

    String tag() {
      return name().toLowerCase(java.util.Locale.ROOT);
    }
  }

  /** What became of a claimed entry. */
  public enum Outcome {
    /** Fired, status only (phase Fired). */
    FIRED(true),
    /** Fired: its Job was created (or found, created by an earlier attempt). */
    JOB_CREATED(true),
    /** Too late for startingDeadlineSeconds: nothing fired, phase Missed. */
    MISSED(true),
    /** Cannot fire for a reason retrying will not fix: phase Failed. */
    FAILED(true),
    /** The entry no longer stands for a due task (gone, re-created, moved, invalid): dropped. */
    STALE(false),
    /** A transient error: handed back to be tried again with backoff. */
    RETRY(false),
    /** Redis's clock says due, this operator's not yet: handed back until both agree. */
    CLOCK_SKEW(false),
    /** A task with a jobTemplate or a sink.audience was due while the admission policy was missing: handed back. */
    ADMISSION_POLICY_MISSING(false);

    private final boolean settles;

    Outcome(boolean isFinal) {
      this.settles = isFinal;
    }

    /** True for the outcomes that settle a due time (counted as {@link #FIRED}); false for skips. */
    public boolean isFinal() {
      return settles;
    }

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
      counters.computeIfAbsent(outcome, this::counter);
      if (outcome.isFinal()) {
        deprecatedCounters.computeIfAbsent(outcome, this::deprecatedCounter);
      }
    }
    for (Delivery delivery : Delivery.values()) {
      deliveries.put(delivery, Counter.builder(DELIVERIES)
          .description("Sink delivery attempts by outcome: delivered, retry, failed, dead_lettered")
          .tag("outcome", delivery.tag())
          .register(registry));
    }
  }

  public void delivery(Delivery outcome) {
    deliveries.get(outcome).increment();
  }

  public void lag(Duration duration) {
    lag.record(duration.isNegative() ? Duration.ZERO : duration);
  }

  public void outcome(Outcome outcome) {
    counters.computeIfAbsent(outcome, this::counter).increment();
    if (outcome.isFinal()) {
      deprecatedCounters.computeIfAbsent(outcome, this::deprecatedCounter).increment();
    }
  }

  private Counter deprecatedCounter(Outcome outcome) {
    return Counter.builder(FIRED)
        .description("Deprecated, until 0.2.0: delayedtask_due_times_total under its former name")
        .tag("outcome", outcome.tag())
        .register(registry);
  }

  private Counter counter(Outcome outcome) {
    if (outcome.isFinal()) {
      return Counter.builder(DUE_TIMES)
          .description("Due times settled, by outcome: fired, job_created, missed, failed")
          .tag("outcome", outcome.tag())
          .register(registry);
    }
    return Counter.builder(SKIPPED)
        .description("Claims that ended without an outcome, by reason: retry, stale, clock_skew, admission_policy_missing")
        .tag("reason", outcome.tag())
        .register(registry);
  }
}
