package io.delayedtask.operator.reconcile;

import static org.assertj.core.api.Assertions.assertThat;

import io.delayedtask.operator.api.v1alpha1.DelayedTaskStatus;
import io.delayedtask.operator.api.v1alpha1.Phase;
import org.junit.jupiter.api.Test;

/** Which status write records a firing, and so gets the firing's span: once per due time. */
class FiringRecordedTest {
  private static DelayedTaskStatus status(Phase phase, String due, String fired) {
    DelayedTaskStatus status = new DelayedTaskStatus();
    status.setPhase(phase);
    status.setDueTime(due);
    status.setFiredTime(fired);
    return status;
  }

  @Test
  void theWriteThatFirstRecordsTheFiringTimeOrMissedIsTheFiring() {
    String due = "2026-12-05T18:00:00.000Z";
    String fired = "2026-12-05T18:00:00.010Z";
    assertThat(
            DelayedTaskReconciler.firing(
                status(Phase.Scheduled, due, null), status(Phase.Running, due, fired)))
        .isTrue();
    assertThat(DelayedTaskReconciler.firing(null, status(Phase.Fired, due, fired))).isTrue();
    assertThat(
            DelayedTaskReconciler.firing(
                status(Phase.Scheduled, due, null), status(Phase.Missed, due, null)))
        .isTrue();
    // Later writes of the same firing: its Job's outcome, a retry's outcome.
    assertThat(
            DelayedTaskReconciler.firing(
                status(Phase.Running, due, fired), status(Phase.Succeeded, due, fired)))
        .isFalse();
    assertThat(
            DelayedTaskReconciler.firing(
                status(Phase.Missed, due, null), status(Phase.Missed, due, null)))
        .isFalse();
    assertThat(
            DelayedTaskReconciler.firing(
                status(Phase.Scheduled, due, null), status(Phase.Scheduled, due, null)))
        .isFalse();
    // A new due time (runAt changed after firing) fires again.
    assertThat(
            DelayedTaskReconciler.firing(
                status(Phase.Fired, due, fired),
                status(Phase.Fired, "2026-12-05T19:00:00.000Z", "2026-12-05T19:00:00.010Z")))
        .isTrue();
  }
}
