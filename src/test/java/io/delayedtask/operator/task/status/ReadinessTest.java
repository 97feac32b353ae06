package io.delayedtask.operator.task.status;

import static org.assertj.core.api.Assertions.assertThat;

import io.delayedtask.operator.api.v1alpha1.Condition;
import io.delayedtask.operator.api.v1alpha1.DelayedTaskStatus;
import io.delayedtask.operator.api.v1alpha1.Phase;
import io.delayedtask.operator.task.time.Times;
import java.time.Instant;
import java.util.stream.Stream;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.Arguments;
import org.junit.jupiter.params.provider.MethodSource;

/** The phase table of docs/reference.md: what Ready, Reconciling and Stalled say in every phase. */
class ReadinessTest {
  private static final Instant NOW = Instant.parse("2026-12-03T07:00:05Z");
  private static final Long GENERATION = 3L;

  static Stream<Arguments> phases() {
    return Stream.of(
        // phase, Ready, Reconciling, Stalled, what Ready's message says
        Arguments.of(Phase.Scheduled, "True", "False", "False", "due at 2026-12-03T07:00:00.000Z"),
        Arguments.of(Phase.Suspended, "True", "False", "False", "spec.suspend is true"),
        Arguments.of(Phase.Running, "False", "True", "False", "Job t-1a2b3c4d"),
        Arguments.of(Phase.Fired, "True", "False", "False", "fired at 2026-12-03T07:00:00.012Z"),
        Arguments.of(Phase.Succeeded, "True", "False", "False", "Job t-1a2b3c4d completed"),
        Arguments.of(
            Phase.Failed, "False", "False", "True", "the API server refused Job t-1a2b3c4d"),
        Arguments.of(
            Phase.Missed, "False", "False", "True", "the API server refused Job t-1a2b3c4d"),
        Arguments.of(
            Phase.Invalid, "False", "False", "True", "the API server refused Job t-1a2b3c4d"));
  }

  @ParameterizedTest(name = "{0}")
  @MethodSource("phases")
  void eachPhaseReadsToKstatusAsTheContractSays(
      Phase phase, String ready, String reconciling, String stalled, String readySays) {
    DelayedTaskStatus status = status(phase);

    Readiness.apply(status, GENERATION, NOW);

    assertThat(condition(status, Condition.READY).getStatus()).isEqualTo(ready);
    assertThat(condition(status, Condition.RECONCILING).getStatus()).isEqualTo(reconciling);
    assertThat(condition(status, Condition.STALLED).getStatus()).isEqualTo(stalled);
    assertThat(condition(status, Condition.READY).getMessage()).contains(readySays);
    assertThat(condition(status, Condition.READY).getReason()).isEqualTo(phase.name());
  }

  @Test
  void everyConditionAndTheStatusCarryTheGenerationSeen() {
    DelayedTaskStatus status = status(Phase.Running);
    Conditions.set(status, Condition.FIRED, true, "JobCreated", "created Job t-1a2b3c4d", NOW, 1L);

    Readiness.apply(status, GENERATION, NOW);

    assertThat(status.getObservedGeneration()).isEqualTo(GENERATION);
    assertThat(status.getConditions())
        .extracting(Condition::getType)
        .containsExactly(
            Condition.FIRED, Condition.READY, Condition.RECONCILING, Condition.STALLED);
    assertThat(status.getConditions())
        .allSatisfy(c -> assertThat(c.getObservedGeneration()).isEqualTo(GENERATION));
  }

  @Test
  void applyingTwiceChangesNothingSoNoStatusWriteFollows() {
    DelayedTaskStatus once = status(Phase.Fired);
    Readiness.apply(once, GENERATION, NOW);
    DelayedTaskStatus twice = Conditions.copy(once);

    Readiness.apply(twice, GENERATION, NOW.plusSeconds(60));

    assertThat(twice).isEqualTo(once);
  }

  @Test
  void readyMovesItsTransitionTimeOnlyWhenItsStatusChanges() {
    DelayedTaskStatus status = status(Phase.Scheduled);
    Readiness.apply(status, GENERATION, NOW);
    status.setPhase(Phase.Running);
    Instant fired = NOW.plusSeconds(10);

    Readiness.apply(status, GENERATION, fired);

    assertThat(condition(status, Condition.READY).getLastTransitionTime())
        .isEqualTo(Times.format(fired));
    status.setPhase(Phase.Succeeded);
    Readiness.apply(status, GENERATION, fired.plusSeconds(5));
    assertThat(condition(status, Condition.RECONCILING).getStatus()).isEqualTo("False");
    assertThat(condition(status, Condition.STALLED).getLastTransitionTime())
        .isEqualTo(Times.format(NOW));
  }

  @Test
  void aNoteIsAddedToReadysMessage() {
    DelayedTaskStatus status = status(Phase.Fired);

    Readiness.apply(
        status, GENERATION, NOW, "kept: managed by Flux (kustomize.toolkit.fluxcd.io/name)");

    assertThat(condition(status, Condition.READY).getMessage())
        .isEqualTo(
            "fired at 2026-12-03T07:00:00.012Z; kept: managed by Flux (kustomize.toolkit.fluxcd.io/name)");
  }

  /**
   * Each kind of task reads in its own words: a Job's, a delivery's, a status-only firing's; never
   * "Job null".
   */
  static Stream<Arguments> kinds() {
    return Stream.of(
        Arguments.of(
            "Job, running",
            Phase.Running,
            "t-1a2b3c4d",
            null,
            null,
            "running: Job t-1a2b3c4d was created at 2026-12-03T07:00:00.012Z and has not finished"),
        Arguments.of(
            "Job, succeeded",
            Phase.Succeeded,
            "t-1a2b3c4d",
            null,
            null,
            "succeeded: Job t-1a2b3c4d completed (fired at 2026-12-03T07:00:00.012Z)"),
        Arguments.of(
            "sink, waiting for a retry",
            Phase.Running,
            null,
            "http://orders.shop.svc.cluster.local/cancel",
            retrying(),
            "running: delivery attempt 2 to http://orders.shop.svc.cluster.local/cancel did not succeed; "
                + "the next attempt is at 2026-12-03T07:00:03.000Z"),
        Arguments.of(
            "sink, delivered",
            Phase.Succeeded,
            null,
            "http://orders.shop.svc.cluster.local/cancel",
            delivered(),
            "succeeded: delivered to http://orders.shop.svc.cluster.local/cancel on attempt 1 (fired at "
                + "2026-12-03T07:00:00.012Z)"),
        Arguments.of(
            "sink, no URL recorded yet",
            Phase.Running,
            null,
            null,
            null,
            "running: delivering to the sink (fired at 2026-12-03T07:00:00.012Z)"),
        Arguments.of(
            "status-only, fired",
            Phase.Fired,
            null,
            null,
            null,
            "fired at 2026-12-03T07:00:00.012Z"));
  }

  @ParameterizedTest(name = "{0}")
  @MethodSource("kinds")
  void readySaysWhatEachKindOfTaskIsDoing(
      String kind,
      Phase phase,
      String jobName,
      String sinkUri,
      io.delayedtask.operator.api.v1alpha1.DeliveryStatus delivery,
      String expected) {
    DelayedTaskStatus status = new DelayedTaskStatus();
    status.setPhase(phase);
    status.setDueTime("2026-12-03T07:00:00.000Z");
    status.setFiredTime("2026-12-03T07:00:00.012Z");
    status.setJobName(jobName);
    status.setSinkUri(sinkUri);
    status.setDelivery(delivery);

    Readiness.apply(status, GENERATION, NOW);

    assertThat(condition(status, Condition.READY).getMessage())
        .isEqualTo(expected)
        .doesNotContain("null");
  }

  private static io.delayedtask.operator.api.v1alpha1.DeliveryStatus retrying() {
    var delivery = new io.delayedtask.operator.api.v1alpha1.DeliveryStatus();
    delivery.setAttempts(2);
    delivery.setNextAttemptTime("2026-12-03T07:00:03.000Z");
    return delivery;
  }

  private static io.delayedtask.operator.api.v1alpha1.DeliveryStatus delivered() {
    var delivery = new io.delayedtask.operator.api.v1alpha1.DeliveryStatus();
    delivery.setAttempts(1);
    return delivery;
  }

  private static DelayedTaskStatus status(Phase phase) {
    DelayedTaskStatus status = new DelayedTaskStatus();
    status.setPhase(phase);
    status.setDueTime("2026-12-03T07:00:00.000Z");
    if (phase == Phase.Running || phase == Phase.Fired || phase == Phase.Succeeded) {
      status.setFiredTime("2026-12-03T07:00:00.012Z");
    }
    if (phase == Phase.Running || phase == Phase.Succeeded) {
      status.setJobName("t-1a2b3c4d");
    }
    if (phase == Phase.Failed || phase == Phase.Missed || phase == Phase.Invalid) {
      status.setMessage("the API server refused Job t-1a2b3c4d: forbidden");
    }
    return status;
  }

  private static Condition condition(DelayedTaskStatus status, String type) {
    return Conditions.find(status, type)
        .orElseThrow(() -> new AssertionError("no " + type + " condition"));
  }
}
