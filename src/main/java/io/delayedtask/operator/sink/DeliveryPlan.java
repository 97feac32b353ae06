package io.delayedtask.operator.sink;

import io.delayedtask.operator.decision.ClaimVerdict;
import io.delayedtask.operator.decision.DeliveryCount;
import io.delayedtask.operator.decision.ScheduleChange;
import io.delayedtask.operator.decision.TaskEvent;
import io.delayedtask.operator.schedule.ClaimedEntry;
import java.time.Instant;
import java.util.List;
import java.util.Objects;
import java.util.Optional;

/**
 * A sink task's part of the reconciler's plan, as {@link DeliveryDecisions} decides it (besides the
 * status it wrote into the task's desired status), in the plan's own types ({@code decision/}): the
 * decider copies each part that is present into its plan as it is.
 *
 * @param schedule the task's schedule entry; empty: as the decider had it before asking
 * @param claim what becomes of the claim this reconcile was woken by; empty: no verdict
 * @param awaitAdmission the admission policy is missing and the attempt would act with the
 *     operator's rights: the decider holds the task back, as it would a Job
 * @param send the attempt to send now (without waiting: its outcome comes back through {@link
 *     DeliveryOutcomes})
 * @param counted how a recorded attempt counts on /metrics ({@code delayedtask_deliveries_total})
 * @param events the Events the recorded attempt adds
 */
public record DeliveryPlan(
    Optional<ScheduleChange> schedule,
    Optional<ClaimVerdict> claim,
    Optional<AdmissionWait> awaitAdmission,
    Optional<DeliveryAttempt> send,
    Optional<DeliveryCount> counted,
    List<TaskEvent> events) {

  public DeliveryPlan {
    Objects.requireNonNull(schedule, "schedule");
    Objects.requireNonNull(claim, "claim");
    Objects.requireNonNull(awaitAdmission, "awaitAdmission");
    Objects.requireNonNull(send, "send");
    Objects.requireNonNull(counted, "counted");
    events = List.copyOf(events);
  }

  /**
   * Fail closed: the sink's token or signature would act with the operator's right to make it, and
   * the admission policy that checked the author's is missing ({@code what} says what is held
   * back).
   */
  public record AdmissionWait(ClaimedEntry claim, String what) {}

  /** Only the entry changes (or stays, {@link ScheduleChange#KEEP}). */
  static DeliveryPlan schedule(ScheduleChange change) {
    return new DeliveryPlan(
        Optional.of(change),
        Optional.empty(),
        Optional.empty(),
        Optional.empty(),
        Optional.empty(),
        List.of());
  }

  /** Only the claim: the entry as the decider had it. */
  static DeliveryPlan claim(ClaimVerdict verdict) {
    return new DeliveryPlan(
        Optional.empty(),
        Optional.of(verdict),
        Optional.empty(),
        Optional.empty(),
        Optional.empty(),
        List.of());
  }

  /** The entry changes and the claim is settled. */
  static DeliveryPlan scheduleAndClaim(ScheduleChange change, ClaimVerdict verdict) {
    return new DeliveryPlan(
        Optional.of(change),
        Optional.of(verdict),
        Optional.empty(),
        Optional.empty(),
        Optional.empty(),
        List.of());
  }

  static DeliveryPlan awaitAdmission(ClaimedEntry claim, String what) {
    return new DeliveryPlan(
        Optional.empty(),
        Optional.empty(),
        Optional.of(new AdmissionWait(claim, what)),
        Optional.empty(),
        Optional.empty(),
        List.of());
  }

  /**
   * Send this attempt now; the claim comes back at {@code safetyNet} should its answer never be
   * recorded.
   */
  static DeliveryPlan send(DeliveryAttempt attempt, Instant safetyNet) {
    return new DeliveryPlan(
        Optional.of(ScheduleChange.KEEP),
        Optional.of(ClaimVerdict.HandBack.until(safetyNet)),
        Optional.empty(),
        Optional.of(attempt),
        Optional.empty(),
        List.of());
  }

  /** A recorded attempt: its entry, how it counts, its Event. */
  static DeliveryPlan recorded(ScheduleChange change, DeliveryCount counted, TaskEvent event) {
    return new DeliveryPlan(
        Optional.of(change),
        Optional.empty(),
        Optional.empty(),
        Optional.empty(),
        Optional.of(counted),
        List.of(event));
  }
}
