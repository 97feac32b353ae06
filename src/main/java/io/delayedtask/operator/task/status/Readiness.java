package io.delayedtask.operator.task.status;

import io.delayedtask.operator.api.v1alpha1.Condition;
import io.delayedtask.operator.api.v1alpha1.DelayedTaskStatus;
import io.delayedtask.operator.api.v1alpha1.DeliveryStatus;
import io.delayedtask.operator.api.v1alpha1.Phase;
import java.time.Instant;

/**
 * How each phase reads to kstatus (Flux's {@code wait}, {@code dependsOn} and health checks) and
 * Argo CD: the conditions Ready, Reconciling and Stalled (docs/reference.md, the phase table).
 * kstatus reads only Reconciling=True (InProgress) and Stalled=True (Failed), then Ready; a False
 * one counts as absent. All three are always present here, the two abnormal-true ones False when
 * they do not apply, so a status says the same to every reader. Every status the reconciler decides
 * is finished with {@link #apply}, so no phase goes out without them.
 */
public final class Readiness {
  private Readiness() {}

  /** The three kstatus conditions of a phase, and the sentence Ready carries. */
  public record Verdict(boolean ready, boolean reconciling, boolean stalled, String message) {}

  /** The mapping phase -> (Ready, Reconciling, Stalled), with what Ready says about it. */
  public static Verdict of(DelayedTaskStatus status) {
    Phase phase = status.getPhase();
    return switch (phase) {
      case Scheduled -> new Verdict(true, false, false, "scheduled: due at " + status.getDueTime());
      case Suspended ->
          new Verdict(true, false, false, "suspended: spec.suspend is true, so it does not fire");
      case Running ->
          new Verdict(
              false,
              true,
              false,
              status.getJobName() != null
                  ? "running: Job "
                      + status.getJobName()
                      + " was created at "
                      + status.getFiredTime()
                      + " and has not finished"
                  : "running: " + delivering(status));
      case Fired -> new Verdict(true, false, false, "fired at " + status.getFiredTime());
      case Succeeded ->
          new Verdict(
              true,
              false,
              false,
              status.getJobName() != null
                  ? "succeeded: Job "
                      + status.getJobName()
                      + " completed (fired at "
                      + status.getFiredTime()
                      + ")"
                  : "succeeded: delivered to "
                      + sink(status)
                      + attempt(status)
                      + " (fired at "
                      + status.getFiredTime()
                      + ")");
      case Failed, Missed, Invalid ->
          new Verdict(
              false,
              false,
              true,
              phase.name().toLowerCase(java.util.Locale.ROOT)
                  + ": "
                  + (status.getMessage() != null ? status.getMessage() : "no reason recorded"));
    };
  }

  /** A sink task between attempts: how many were made, where to, and when the next one is. */
  private static String delivering(DelayedTaskStatus status) {
    DeliveryStatus delivery = status.getDelivery();
    if (delivery == null || delivery.getAttempts() == null) {
      return "delivering to " + sink(status) + " (fired at " + status.getFiredTime() + ")";
    }
    return "delivery attempt "
        + delivery.getAttempts()
        + " to "
        + sink(status)
        + " did not succeed"
        + (delivery.getNextAttemptTime() == null
            ? ""
            : "; the next attempt is at " + delivery.getNextAttemptTime());
  }

  private static String sink(DelayedTaskStatus status) {
    return status.getSinkUri() != null ? status.getSinkUri() : "the sink";
  }

  private static String attempt(DelayedTaskStatus status) {
    DeliveryStatus delivery = status.getDelivery();
    return delivery == null || delivery.getAttempts() == null
        ? ""
        : " on attempt " + delivery.getAttempts();
  }

  /**
   * Ready's reason while a due task waits for the admission policy (the one exception to the phase
   * table).
   */
  public static final String ADMISSION_POLICY_MISSING = "AdmissionPolicyMissing";

  /**
   * Ready's reason while a due task's spec, written while the admission policy was missing, waits
   * to be written again.
   */
  public static final String NOT_ADMITTED = "NotAdmitted";

  /**
   * Why a task that is due does not fire yet although its phase reads ready: {@code reason} and
   * {@code message} go on Ready, which is then False (kstatus reads the task as not ready).
   */
  public record Hold(String reason, String message) {}

  /** Sets Ready, Reconciling and Stalled from the phase, and stamps the generation everywhere. */
  public static void apply(DelayedTaskStatus status, Long generation, Instant now) {
    apply(status, generation, now, null);
  }

  /**
   * @param readyNote appended to Ready's message (why a finished task is kept, for one); null for
   *     none
   */
  public static void apply(
      DelayedTaskStatus status, Long generation, Instant now, String readyNote) {
    apply(status, generation, now, readyNote, null);
  }

  /**
   * @param hold a due task held back (the admission policy missing): Ready is False with its reason
   *     and message, whatever the phase; null for none
   */
  public static void apply(
      DelayedTaskStatus status, Long generation, Instant now, String readyNote, Hold hold) {
    status.setObservedGeneration(generation);
    if (status.getPhase() != null) {
      Verdict verdict = of(status);
      String reason = status.getPhase().name();
      String readyMessage =
          readyNote == null ? verdict.message() : verdict.message() + "; " + readyNote;
      if (hold != null) {
        Conditions.set(
            status, Condition.READY, false, hold.reason(), hold.message(), now, generation);
      } else {
        Conditions.set(
            status, Condition.READY, verdict.ready(), reason, readyMessage, now, generation);
      }
      Conditions.set(
          status,
          Condition.RECONCILING,
          verdict.reconciling(),
          reason,
          verdict.reconciling() ? verdict.message() : "nothing in progress",
          now,
          generation);
      Conditions.set(
          status,
          Condition.STALLED,
          verdict.stalled(),
          reason,
          verdict.stalled() ? verdict.message() : "not stalled",
          now,
          generation);
    }
    // kstatus (and a careful reader) trusts a condition only for the generation it names.
    for (Condition condition : status.getConditions()) {
      condition.setObservedGeneration(generation);
    }
  }
}
