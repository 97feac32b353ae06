package io.delayedtask.operator.reconcile;

import static org.assertj.core.api.Assertions.assertThat;

import io.delayedtask.operator.decision.ClaimOutcome;
import io.micrometer.core.instrument.Counter;
import io.micrometer.core.instrument.MeterRegistry;
import io.micrometer.core.instrument.simple.SimpleMeterRegistry;
import io.micrometer.prometheusmetrics.PrometheusConfig;
import io.micrometer.prometheusmetrics.PrometheusMeterRegistry;
import org.junit.jupiter.api.Test;

class FireMetricsTest {

  @Test
  void settledDueTimesAndSkippedClaimsAreCountedApart() {
    SimpleMeterRegistry registry = new SimpleMeterRegistry();
    FireMetrics metrics = new FireMetrics(registry);
    metrics.outcome(ClaimOutcome.RETRY);
    metrics.outcome(ClaimOutcome.RETRY);
    metrics.outcome(ClaimOutcome.RETRY);
    metrics.outcome(ClaimOutcome.CLOCK_SKEW);
    metrics.outcome(ClaimOutcome.STALE);
    metrics.outcome(ClaimOutcome.JOB_CREATED); // the retried task fires in the end: one firing
    metrics.outcome(ClaimOutcome.FIRED);
    metrics.outcome(ClaimOutcome.MISSED);
    metrics.outcome(ClaimOutcome.FAILED);

    assertThat(registry.find(FireMetrics.DUE_TIMES).counters())
        .extracting(c -> c.getId().getTag("outcome"))
        .containsExactlyInAnyOrder("fired", "job_created", "missed", "failed");
    assertThat(total(registry, FireMetrics.DUE_TIMES))
        .as("four due times settled, whatever the retries")
        .isEqualTo(4);
    assertThat(count(registry, FireMetrics.DUE_TIMES, "outcome", "job_created")).isEqualTo(1);

    assertThat(registry.find(FireMetrics.SKIPPED).counters())
        .extracting(c -> c.getId().getTag("reason"))
        .containsExactlyInAnyOrder("retry", "stale", "clock_skew", "admission_policy_missing");
    assertThat(count(registry, FireMetrics.SKIPPED, "reason", "retry")).isEqualTo(3);
    assertThat(count(registry, FireMetrics.SKIPPED, "reason", "clock_skew")).isEqualTo(1);
    assertThat(count(registry, FireMetrics.SKIPPED, "reason", "stale")).isEqualTo(1);
  }

  @Test
  void everyOutcomeIsExportedAtZeroBeforeItFirstHappens() {
    SimpleMeterRegistry registry = new SimpleMeterRegistry();
    FireMetrics metrics = new FireMetrics(registry);
    for (ClaimOutcome outcome : ClaimOutcome.values()) {
      String name = outcome.isFinal() ? FireMetrics.DUE_TIMES : FireMetrics.SKIPPED;
      String tag = outcome.isFinal() ? "outcome" : "reason";
      assertThat(count(registry, name, tag, FireMetrics.tag(outcome)))
          .as(FireMetrics.tag(outcome))
          .isZero();
    }
    metrics.outcome(ClaimOutcome.FAILED);
    assertThat(count(registry, FireMetrics.DUE_TIMES, "outcome", "failed")).isEqualTo(1.0);
  }

  @Test
  void everyOutcomeIsEitherAFiringOrASkip() {
    assertThat(ClaimOutcome.values())
        .filteredOn(ClaimOutcome::isFinal)
        .containsExactlyInAnyOrder(
            ClaimOutcome.FIRED, ClaimOutcome.JOB_CREATED, ClaimOutcome.MISSED, ClaimOutcome.FAILED);
  }

  @Test
  void prometheusNamesAreTheDocumentedOnes() {
    PrometheusMeterRegistry registry = new PrometheusMeterRegistry(PrometheusConfig.DEFAULT);
    FireMetrics metrics = new FireMetrics(registry);
    metrics.outcome(ClaimOutcome.FIRED);
    metrics.outcome(ClaimOutcome.CLOCK_SKEW);
    String scrape = registry.scrape();
    assertThat(scrape)
        .contains("delayedtask_due_times_total{outcome=\"fired\"} 1.0")
        .contains("delayedtask_due_times_total{outcome=\"missed\"} 0.0")
        .contains("delayedtask_fire_skipped_total{reason=\"clock_skew\"} 1.0")
        .doesNotContain("delayedtask_due_times_total{outcome=\"clock_skew\"}");
  }

  @Test
  void theDeprecatedNameCountsTheSameUntilItIsRemoved() {
    PrometheusMeterRegistry registry = new PrometheusMeterRegistry(PrometheusConfig.DEFAULT);
    FireMetrics metrics = new FireMetrics(registry);
    metrics.outcome(ClaimOutcome.JOB_CREATED);
    metrics.outcome(ClaimOutcome.JOB_CREATED);
    metrics.outcome(ClaimOutcome.MISSED);
    metrics.outcome(ClaimOutcome.RETRY);
    String scrape = registry.scrape();
    for (String outcome :
        java.util.List.of("fired 0.0", "job_created 2.0", "missed 1.0", "failed 0.0")) {
      String[] parts = outcome.split(" ");
      assertThat(scrape)
          .contains("delayedtask_due_times_total{outcome=\"" + parts[0] + "\"} " + parts[1])
          .contains("delayedtask_fired_total{outcome=\"" + parts[0] + "\"} " + parts[1]);
    }
    assertThat(scrape).doesNotContain("delayedtask_fired_total{outcome=\"retry\"}");
  }

  private static double count(MeterRegistry registry, String name, String tag, String value) {
    return registry.get(name).tag(tag, value).counter().count();
  }

  private static double total(MeterRegistry registry, String name) {
    return registry.find(name).counters().stream().mapToDouble(Counter::count).sum();
  }
}
