package io.delayedtask.operator.task.status;

import static org.assertj.core.api.Assertions.assertThat;

import io.delayedtask.operator.api.v1alpha1.Condition;
import io.delayedtask.operator.api.v1alpha1.DelayedTask;
import io.delayedtask.operator.api.v1alpha1.DelayedTaskSpec;
import io.delayedtask.operator.api.v1alpha1.DelayedTaskStatus;
import io.delayedtask.operator.api.v1alpha1.Phase;
import io.delayedtask.operator.sink.SinkSpecRules;
import io.delayedtask.operator.task.spec.SpecValidator;
import io.fabric8.kubernetes.api.model.ObjectMetaBuilder;
import java.time.Instant;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;

class TaskStateTest {
  private static final Instant DUE = Instant.parse("2026-12-03T07:00:00Z");
  private final SpecValidator validator = new SpecValidator(SinkSpecRules.defaults());

  @ParameterizedTest(name = "{0} for {1}: handled={2}")
  @CsvSource({
    "Scheduled, 2026-12-03T07:00:00.000Z, false",
    "Suspended, 2026-12-03T07:00:00.000Z, false",
    "Invalid, 2026-12-03T07:00:00.000Z, false",
    "Running, 2026-12-03T07:00:00.000Z, true",
    "Fired, 2026-12-03T07:00:00.000Z, true",
    "Succeeded, 2026-12-03T07:00:00.000Z, true",
    "Failed, 2026-12-03T07:00:00.000Z, true",
    "Missed, 2026-12-03T07:00:00.000Z, true",
    "Fired, 2026-12-03T06:00:00.000Z, false",
  })
  void aTaskIsHandledOnlyOnceItFiredForThisVeryDueTime(
      Phase phase, String dueTime, boolean handled) {
    DelayedTaskStatus status = new DelayedTaskStatus();
    status.setPhase(phase);
    status.setDueTime(dueTime);
    assertThat(TaskState.handledFor(status, DUE)).isEqualTo(handled);
  }

  @Test
  void aFiredTimeForThisDueTimeIsAFiringEvenWithoutAReadablePhase() {
    DelayedTaskStatus status = new DelayedTaskStatus();
    status.setDueTime("2026-12-03T07:00:00.000Z");
    assertThat(TaskState.handledFor(status, DUE)).isFalse();

    status.setFiredTime("2026-12-03T07:00:00.004Z");
    assertThat(TaskState.handledFor(status, DUE)).isTrue();
    assertThat(TaskState.handledFor(status, DUE.plusSeconds(60))).isFalse();
  }

  @Test
  void waitingDueIsEmptyForSuspendedInvalidAndFiredTasks() {
    DelayedTask task = task("2026-12-03T07:00:00Z");
    assertThat(TaskState.waitingDue(task, validator)).contains(DUE);

    task.getSpec().setSuspend(true);
    assertThat(TaskState.waitingDue(task, validator)).isEmpty();

    task.getSpec().setSuspend(false);
    DelayedTaskStatus fired = new DelayedTaskStatus();
    fired.setPhase(Phase.Fired);
    fired.setDueTime("2026-12-03T07:00:00.000Z");
    task.setStatus(fired);
    assertThat(TaskState.waitingDue(task, validator)).isEmpty();

    assertThat(TaskState.waitingDue(task("not a time"), validator)).isEmpty();
  }

  @Test
  void conditionsKeepTheirTransitionTimeWhileTheirStatusHolds() {
    DelayedTaskStatus status = new DelayedTaskStatus();
    Conditions.set(status, Condition.SCHEDULED, true, "Scheduled", "due", DUE, 1L);
    Conditions.set(status, Condition.SCHEDULED, true, "Scheduled", "due", DUE.plusSeconds(60), 1L);
    assertThat(status.getConditions())
        .singleElement()
        .satisfies(
            c -> assertThat(c.getLastTransitionTime()).isEqualTo("2026-12-03T07:00:00.000Z"));

    Conditions.set(status, Condition.SCHEDULED, false, "Fired", "fired", DUE.plusSeconds(120), 1L);
    Conditions.set(status, Condition.FIRED, true, "Fired", "fired", DUE.plusSeconds(120), 1L);
    assertThat(status.getConditions())
        .extracting(Condition::getType)
        .containsExactly("Scheduled", "Fired");
    assertThat(status.getConditions().get(0).getLastTransitionTime())
        .isEqualTo("2026-12-03T07:02:00.000Z");
    assertThat(Conditions.lastTransition(status)).contains(DUE.plusSeconds(120));
    assertThat(Conditions.copy(status)).isEqualTo(status).isNotSameAs(status);
  }

  private static DelayedTask task(String runAt) {
    DelayedTask task = new DelayedTask();
    task.setMetadata(
        new ObjectMetaBuilder()
            .withName("t")
            .withNamespace("ns")
            .withUid("u")
            .withCreationTimestamp("2026-12-01T00:00:00Z")
            .build());
    DelayedTaskSpec spec = new DelayedTaskSpec();
    spec.setRunAt(runAt);
    task.setSpec(spec);
    return task;
  }
}
