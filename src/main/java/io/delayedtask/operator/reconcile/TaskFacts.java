package io.delayedtask.operator.reconcile;

import io.delayedtask.operator.api.v1alpha1.DelayedTask;
import io.delayedtask.operator.schedule.ClaimedEntry;
import io.delayedtask.operator.schedule.QueueHold;
import io.delayedtask.operator.sink.DeliveryOutcome;
import io.fabric8.kubernetes.api.model.batch.v1.Job;
import java.time.Instant;
import java.util.Map;
import java.util.Objects;
import java.util.Optional;

/**
 * Everything one decision reads, gathered by the reconciler from JOSDK's caches: the task, its Jobs
 * by name, the schedule claim waiting for it (when the leader's poller found it due), the time, and
 * for a sink task the outcome of its last delivery attempt (waiting to be recorded) and whether a
 * request is still in flight. Once a decision has named a Job to create, the API server's answer
 * ({@code jobCreation}) joins the facts and the task is decided again; likewise the answer to the
 * dry run of a Job task's creation when it is scheduled ({@code jobCheck}). {@code
 * admissionPolicyMissing} says why the admission policy counts as missing ({@link
 * AdmissionPolicies}); empty while it is in place or not checked. {@code notAdmitted} says why the
 * task's current spec, written while the policy was missing, never went through it; {@code
 * admissionRecord} is the operator's record that it did (status.admission), to write. {@code
 * queueHold} says why the task's queue holds it, due and waiting (the leader's claims of the queue
 * report it).
 */
public record TaskFacts(
    DelayedTask task,
    Map<String, Job> jobs,
    Optional<ClaimedEntry> claim,
    Instant now,
    Optional<DeliveryOutcome> delivery,
    boolean deliveryInFlight,
    Optional<TaskDecider.JobCreation> jobCreation,
    Optional<TaskDecider.JobCheck> jobCheck,
    Optional<String> admissionPolicyMissing,
    Optional<String> notAdmitted,
    Optional<String> admissionRecord,
    Optional<QueueHold> queueHold) {
  public TaskFacts {
    Objects.requireNonNull(queueHold, "queueHold");
    Objects.requireNonNull(task, "task");
    jobs = Map.copyOf(jobs);
    Objects.requireNonNull(claim, "claim");
    Objects.requireNonNull(now, "now");
    Objects.requireNonNull(delivery, "delivery");
    Objects.requireNonNull(jobCreation, "jobCreation");
    Objects.requireNonNull(jobCheck, "jobCheck");
    Objects.requireNonNull(admissionPolicyMissing, "admissionPolicyMissing");
    Objects.requireNonNull(notAdmitted, "notAdmitted");
    Objects.requireNonNull(admissionRecord, "admissionRecord");
  }

  /** Facts with the admission policy in place and no dry run answered. */
  public TaskFacts(
      DelayedTask task,
      Map<String, Job> jobs,
      Optional<ClaimedEntry> claim,
      Instant now,
      Optional<DeliveryOutcome> delivery,
      boolean deliveryInFlight,
      Optional<TaskDecider.JobCreation> jobCreation) {
    this(
        task,
        jobs,
        claim,
        now,
        delivery,
        deliveryInFlight,
        jobCreation,
        Optional.empty(),
        Optional.empty(),
        Optional.empty(),
        Optional.empty(),
        Optional.empty());
  }

  /** Facts gathered before any effect of this reconcile. */
  public TaskFacts(
      DelayedTask task,
      Map<String, Job> jobs,
      Optional<ClaimedEntry> claim,
      Instant now,
      Optional<DeliveryOutcome> delivery,
      boolean deliveryInFlight) {
    this(task, jobs, claim, now, delivery, deliveryInFlight, Optional.empty());
  }

  /** Facts of a task without a delivery in progress. */
  public TaskFacts(
      DelayedTask task, Map<String, Job> jobs, Optional<ClaimedEntry> claim, Instant now) {
    this(task, jobs, claim, now, Optional.empty(), false);
  }

  /** The same facts, and how the API server answered the Job creation a decision asked for. */
  public TaskFacts withJobCreation(TaskDecider.JobCreation creation) {
    return new TaskFacts(
        task,
        jobs,
        claim,
        now,
        delivery,
        deliveryInFlight,
        Optional.of(creation),
        jobCheck,
        admissionPolicyMissing,
        notAdmitted,
        admissionRecord,
        queueHold);
  }

  /**
   * The same facts, and how the API server answered the dry run of the Job's creation a decision
   * asked for.
   */
  public TaskFacts withJobCheck(TaskDecider.JobCheck check) {
    return new TaskFacts(
        task,
        jobs,
        claim,
        now,
        delivery,
        deliveryInFlight,
        jobCreation,
        Optional.of(check),
        admissionPolicyMissing,
        notAdmitted,
        admissionRecord,
        queueHold);
  }

  /** The same facts, the admission policy missing for {@code why}. */
  public TaskFacts withAdmissionPolicyMissing(Optional<String> why) {
    return new TaskFacts(
        task,
        jobs,
        claim,
        now,
        delivery,
        deliveryInFlight,
        jobCreation,
        jobCheck,
        why,
        notAdmitted,
        admissionRecord,
        queueHold);
  }

  /** The same facts, with the admission policy's verdict on this task. */
  public TaskFacts withAdmission(AdmissionPolicies.Verdict verdict) {
    Optional<String> missing =
        verdict instanceof AdmissionPolicies.Verdict.Missing m
            ? Optional.of(m.why())
            : Optional.empty();
    Optional<String> refused =
        verdict instanceof AdmissionPolicies.Verdict.NotAdmitted n
            ? Optional.of(n.why())
            : Optional.empty();
    Optional<String> record =
        verdict instanceof AdmissionPolicies.Verdict.Admitted a ? a.record() : Optional.empty();
    return new TaskFacts(
        task,
        jobs,
        claim,
        now,
        delivery,
        deliveryInFlight,
        jobCreation,
        jobCheck,
        missing,
        refused,
        record,
        queueHold);
  }

  /** The same facts, with why the task's queue holds it (if it does). */
  public TaskFacts withQueueHold(Optional<QueueHold> hold) {
    return new TaskFacts(
        task,
        jobs,
        claim,
        now,
        delivery,
        deliveryInFlight,
        jobCreation,
        jobCheck,
        admissionPolicyMissing,
        notAdmitted,
        admissionRecord,
        hold);
  }

  /** Why a Job or a token is held back now: the policy missing, or this spec never admitted. */
  public boolean admissionHold() {
    return admissionPolicyMissing.isPresent() || notAdmitted.isPresent();
  }
}
