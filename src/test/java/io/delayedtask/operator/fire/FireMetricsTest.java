package io.delayedtask.operator.fire;

import static org.assertj.core.api.Assertions.assertThat;

import io.micrometer.core.instrument.simple.SimpleMeterRegistry;
import org.junit.jupiter.api.Test;

class FireMetricsTest {

  @Test
  void everyOutcomeIsExportedAtZeroBeforeItFirstHappens() {
    SimpleMeterRegistry registry = new SimpleMeterRegistry();
    FireMetrics metrics = new FireMetrics(registry);
    for (FireMetrics.Outcome outcome : FireMetrics.Outcome.values()) {
      assertThat(registry.get(FireMetrics.HANDLED).tag("outcome", outcome.tag()).counter().count())
          .as(outcome.tag()).isZero();
    }
    metrics.outcome(FireMetrics.Outcome.FAILED);
    assertThat(registry.get(FireMetrics.HANDLED).tag("outcome", "failed").counter().count()).isEqualTo(1.0);
  }
}
