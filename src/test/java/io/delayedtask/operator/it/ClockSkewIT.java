package io.delayedtask.operator.it;

import static io.delayedtask.operator.testing.Tasks.create;
import static io.delayedtask.operator.testing.Tasks.get;
import static io.delayedtask.operator.testing.Tasks.phase;
import static io.delayedtask.operator.testing.Tasks.task;
import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import io.delayedtask.operator.api.v1alpha1.DelayedTaskStatus;
import io.delayedtask.operator.api.v1alpha1.Phase;
import io.delayedtask.operator.testing.OperatorFixture;
import io.delayedtask.operator.testing.OperatorFixture.OnRealKubernetes;
import io.delayedtask.operator.testing.OperatorHttp;
import io.delayedtask.operator.testing.RealKubernetes;
import io.delayedtask.operator.testing.RequiresRealKubernetes;
import io.fabric8.kubernetes.client.KubernetesClient;
import java.time.Clock;
import java.time.Duration;
import java.time.Instant;
import java.time.temporal.ChronoUnit;
import java.util.Map;
import org.junit.jupiter.api.Test;

/**
 * The operator's clock 3 s behind Redis's. Due-ness is Redis's call (the claim script compares
 * scores with its TIME), so Redis hands the task over when its clock reaches the due time, while
 * the operator's clock still says 3 s to go. Fired then, the task would be early by the operator's
 * clock and its status would say it fired before it was due. The reconcile hands it back until its
 * own clock agrees: the task fires when both clocks say it is due, late by the skew, never early.
 * Against a real API server, whose watch brings the task.
 */
@RequiresRealKubernetes
class ClockSkewIT {
  private static final Duration SKEW = Duration.ofSeconds(3);

  @Test
  void aTaskFiresOnlyWhenBothRedisAndTheOperatorClockSayItIsDue() {
    RealKubernetes kube = RealKubernetes.shared();
    Clock behind = Clock.offset(Clock.systemUTC(), SKEW.negated());
    try (OnRealKubernetes world =
        OperatorFixture.startOnRealKubernetes(
            kube, "skew", Map.of(), options -> options.withClock(behind))) {
      String ns = world.namespace();
      KubernetesClient client = kube.client();
      // Due far enough ahead that Redis hands it over before the operator's clock agrees, however
      // long the task takes to be scheduled on a loaded machine.
      Instant due = Instant.now().plusSeconds(10).truncatedTo(ChronoUnit.MILLIS);
      create(client, task(ns, "on-time", s -> s.setRunAt(due.toString())));
      await()
          .atMost(Duration.ofSeconds(60))
          .until(() -> phase(client, ns, "on-time").orElse(null) == Phase.Fired);

      // firedTime is the operator's clock: had it fired when Redis said "due" (3 s early by that
      // clock), firedTime would be before dueTime. No wall-clock waiting, so no load can fake it.
      DelayedTaskStatus status = get(client, ns, "on-time").getStatus();
      Instant firedByOperatorClock = Instant.parse(status.getFiredTime());
      assertThat(firedByOperatorClock)
          .isAfterOrEqualTo(Instant.parse(status.getDueTime()))
          .as("fired once the operator's clock said due, not much later")
          .isBefore(due.plusSeconds(5));
      // And Redis did hand it over early, and the operator handed it back.
      assertThat(
              OperatorHttp.metric(
                  world.operator().httpPort(),
                  "delayedtask_fire_skipped_total",
                  "reason=\"clock_skew\""))
          .isGreaterThanOrEqualTo(1.0);
    }
  }
}
