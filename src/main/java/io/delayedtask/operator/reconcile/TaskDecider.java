package io.delayedtask.operator.reconcile;

import io.delayedtask.operator.api.v1alpha1.Condition;
import io.delayedtask.operator.api.v1alpha1.DelayedTask;
import io.delayedtask.operator.api.v1alpha1.DelayedTaskSpec;
import io.delayedtask.operator.api.v1alpha1.DelayedTaskStatus;
import io.delayedtask.operator.api.v1alpha1.Phase;
import io.delayedtask.operator.decision.ClaimOutcome;
import io.delayedtask.operator.decision.ClaimVerdict;
import io.delayedtask.operator.decision.DeliveryCount;
import io.delayedtask.operator.decision.ScheduleChange;
import io.delayedtask.operator.decision.TaskEvent;
import io.delayedtask.operator.leader.TaskQueues;
import io.delayedtask.operator.schedule.ClaimedEntry;
import io.delayedtask.operator.schedule.QueueHold;
import io.delayedtask.operator.schedule.QueueRef;
import io.delayedtask.operator.sink.DeliveryAttempt;
import io.delayedtask.operator.sink.DeliveryDecisions;
import io.delayedtask.operator.sink.DeliveryOutcome;
import io.delayedtask.operator.sink.DeliveryPlan;
import io.delayedtask.operator.task.job.JobFactory;
import io.delayedtask.operator.task.job.JobNames;
import io.delayedtask.operator.task.job.TaskLabels;
import io.delayedtask.operator.task.lifetime.GitOpsOwner;
import io.delayedtask.operator.task.lifetime.SecondsSetting;
import io.delayedtask.operator.task.spec.SpecValidator;
import io.delayedtask.operator.task.spec.Validation;
import io.delayedtask.operator.task.status.Conditions;
import io.delayedtask.operator.task.status.FireNow;
import io.delayedtask.operator.task.status.Readiness;
import io.delayedtask.operator.task.status.TaskState;
import io.delayedtask.operator.task.time.Times;
import io.fabric8.kubernetes.api.model.batch.v1.Job;
import io.fabric8.kubernetes.api.model.batch.v1.JobCondition;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.Optional;

/**
 * What a reconcile of one task should do, as a plain function of {@link TaskFacts}: no request, no
 * clock, no Redis. Every branch of the life cycle (docs/reference.md) is here: validation, suspend,
 * the due time and its entry, firing when the leader's claim arrives (moved, early by this clock,
 * past the deadline, Job there or not), the Job's outcome, and the TTL of a finished task.
 *
 * <p>The status is built fresh from the current one and compared by the caller, which writes it
 * only when it differs. Creating a Job is the one effect whose result the status depends on: the
 * plan names the Job to create, and the caller decides again with the API server's answer among the
 * facts ({@link TaskFacts#jobCreation()}); that decision finishes the firing. Every Event a
 * decision records is in its plan.
 */
public final class TaskDecider {
  /**
   * The longest wait for a TTL before the task is decided again (10 years: the largest TTL a spec
   * may set).
   */
  static final Duration LONGEST_REQUEUE = Duration.ofSeconds(DelayedTaskSpec.MAX_SECONDS);

  private final SpecValidator validator;
  private final SecondsSetting finishedTtl;
  private final SecondsSetting startingDeadline;

  private final DeliveryDecisions deliveries = new DeliveryDecisions();

  public TaskDecider(SpecValidator validator, SecondsSetting finishedTtl) {
    this(validator, finishedTtl, SecondsSetting.startingDeadline(Optional.empty()));
  }

  public TaskDecider(
      SpecValidator validator, SecondsSetting finishedTtl, SecondsSetting startingDeadline) {
    this.validator = validator;
    this.finishedTtl = finishedTtl;
    this.startingDeadline = startingDeadline;
  }

  /** How the API server answered the creation of the task's Job. */
  public sealed interface JobCreation {
    String jobName();

    /** Created now; {@code job} is the API server's answer. */
    record Created(Job job) implements JobCreation {
      @Override
      public String jobName() {
        return job.getMetadata().getName();
      }
    }

    /** It existed already and this task controls it: an earlier attempt created it. */
    record AlreadyOurs(Job job) implements JobCreation {
      @Override
      public String jobName() {
        return job.getMetadata().getName();
      }
    }

    /** A Job of that name exists and something else controls it. */
    record Foreign(String jobName) implements JobCreation {}

    /** Refused for a reason retrying will not fix (403, 422). */
    record Refused(String jobName, String reason) implements JobCreation {}

    /** Worth another try (409 without a Job, 429, 5xx, no answer). */
    record Transient(String jobName, String reason) implements JobCreation {}
  }

  /**
   * How the API server answered a dry run ({@code dryRun=All}) of the creation of a Job task's Job,
   * made once per generation when the task is scheduled.
   */
  public sealed interface JobCheck {
    /** It would be created (or a Job of that name exists already: the template itself passed). */
    record Accepted() implements JobCheck {}

    /** Refused for a reason the template must fix (422, 403 from a policy webhook, 400). */
    record Refused(String reason) implements JobCheck {}

    /**
     * No verdict (5xx, 429, a timeout): scheduled all the same, the real creation decides at the
     * due time.
     */
    record Unanswered(String reason) implements JobCheck {}
  }

  public Plan decide(TaskFacts facts) {
    Draft draft = new Draft(facts, finishedTtl);
    Validation validation = validator.validate(facts.task());
    if (validation instanceof Validation.Invalid invalid) {
      return invalid(draft, invalid.message());
    }
    if (TaskState.jobTemplateRefused(facts.task())) {
      // Refused by the API server for this generation: Invalid until the spec changes.
      return invalid(draft, draft.current.getMessage(), TaskState.JOB_TEMPLATE_REFUSED);
    }
    Instant due = ((Validation.Valid) validation).due();
    boolean sink = facts.task().getSpec().getSink() != null;
    Optional<DeliveryOutcome> outcome =
        facts
            .delivery()
            .filter(answer -> sink && DeliveryDecisions.isAwaited(answer, draft.current, due));
    if (outcome.isPresent()) {
      return delivery(draft, deliveries.record(draft.sinkTask(), outcome.get()));
    }
    Optional<FireNow.Request> fireNow = FireNow.pending(facts.task());
    if (fireNow.isPresent()) {
      String value = fireNow.get().value();
      if (fireNow.get() instanceof FireNow.Request.At at && !FireNow.firedFor(draft.current, due)) {
        return firingNow(draft, at);
      }
      // Nothing fires; the value is recorded so that its Warning is said once, and the decision
      // goes on.
      draft.desired.setFireNowHandled(value);
      draft.extraEvents.add(
          fireNow.get() instanceof FireNow.Request.Malformed
              ? TaskEvent.warning(TaskEvents.FIRE_NOW_INVALID, FireNow.malformedMessage(value))
              : TaskEvent.warning(
                  TaskEvents.FIRE_NOW_IGNORED,
                  "nothing fired for "
                      + FireNow.ANNOTATION
                      + "="
                      + value
                      + ": the task fired already for its due time "
                      + Times.format(due)
                      + "; change spec.runAt or "
                      + "spec.delay to schedule it again"));
    }
    if (TaskState.handledFor(draft.current, due)) {
      return afterFiring(draft);
    }
    if (sink
        && TaskState.nextAttempt(draft.current).isPresent()
        && Times.format(due).equals(draft.current.getDueTime())) {
      return delivery(draft, deliveries.awaitingAttempt(draft.sinkTask(), due));
    }
    prepareForDue(draft, due);
    if (facts.task().getSpec().isSuspended()) {
      Conditions.remove(draft.desired, Condition.QUEUED);
      return suspended(draft);
    }
    Optional<ClaimedEntry> claim = facts.claim();
    if (claim.isPresent()) {
      Conditions.remove(draft.desired, Condition.QUEUED); // its queue let it go
      return fire(draft, due, claim.get());
    }
    if (needsJobCheck(draft)) {
      if (facts.jobCheck().isEmpty()) {
        // Nothing else before the answer: the entry is written, or removed, by the decision after
        // it.
        draft.jobToCheck = Optional.of(JobFactory.jobFor(facts.task(), due, draft.now));
        return draft.build();
      }
      if (facts.jobCheck().get() instanceof JobCheck.Refused refused) {
        return invalid(
            draft,
            "spec.jobTemplate is refused by the API server (a dry run of the Job's creation): "
                + refused.reason()
                + "; fix spec.jobTemplate and apply the task again",
            TaskState.JOB_TEMPLATE_REFUSED);
      }
    }
    return queued(scheduled(draft, due)).build();
  }

  /**
   * A due task its queue holds says why in the condition Queued (docs/reference.md: Ready stays
   * True), once per reason: the status is written only when it changes. A task whose queue no
   * longer names it loses the condition.
   */
  private static Draft queued(Draft draft) {
    Optional<QueueRef> named = TaskQueues.named(draft.facts.task());
    if (named.isEmpty()) {
      Conditions.remove(draft.desired, Condition.QUEUED);
      return draft;
    }
    draft
        .facts
        .queueHold()
        .filter(hold -> hold.queue().equals(named.get()))
        .ifPresent(
            hold ->
                Conditions.set(
                    draft.desired,
                    Condition.QUEUED,
                    true,
                    hold.reason(),
                    queuedMessage(hold),
                    draft.now,
                    draft.generation));
    return draft;
  }

  private static String queuedMessage(QueueHold hold) {
    String queue = "DelayedTaskQueue " + hold.queue().name();
    return switch (hold.reason()) {
      case QueueHold.QUEUE_PAUSED ->
          "due, and waiting: "
              + queue
              + " is paused (spec.paused); it fires, oldest due "
              + "first, when the queue is resumed";
      case QueueHold.QUEUE_MISSING ->
          "due, and waiting: "
              + queue
              + " does not exist; create it (or change "
              + "spec.queue) for the task to fire";
      case QueueHold.RATE_LIMITED ->
          "due, and waiting for its turn within the rate of "
              + queue
              + " (spec.maxDispatchesPerSecond)";
      case QueueHold.CONCURRENCY_LIMITED ->
          "due, and waiting for a free slot of " + queue + " (spec.maxConcurrentDispatches)";
      default -> "due, and waiting in " + queue;
    };
  }

  /**
   * A Job task is checked by a dry run of its Job's creation once per generation, when it is
   * scheduled: when its status does not yet describe this generation (or says Invalid, which an
   * earlier version's rules may have said). A task that was scheduled already is not checked again.
   */
  private static boolean needsJobCheck(Draft draft) {
    if (draft.facts.task().getSpec().getJobTemplate() == null) {
      return false;
    }
    DelayedTaskStatus current = draft.current;
    boolean described =
        current != null
            && Objects.equals(current.getObservedGeneration(), draft.generation)
            && current.getPhase() != null
            && current.getPhase() != Phase.Invalid;
    return !described;
  }

  private Plan invalid(Draft draft, String message) {
    return invalid(draft, message, "Invalid");
  }

  /**
   * {@code reason}: of the Scheduled condition ({@link TaskState#JOB_TEMPLATE_REFUSED} for a dry
   * run's refusal).
   */
  private Plan invalid(Draft draft, String message, String reason) {
    DelayedTaskStatus desired = draft.desired;
    boolean wasInvalid = draft.currentPhase() == Phase.Invalid;
    desired.setPhase(Phase.Invalid);
    desired.setMessage(message);
    desired.setDueTime(null);
    Conditions.set(
        desired, Condition.SCHEDULED, false, reason, message, draft.now, draft.generation);
    // Once Invalid, the entry was removed when it became so.
    return draft
        .schedule(wasInvalid ? ScheduleChange.KEEP : ScheduleChange.REMOVE)
        .claim(ClaimVerdict.Settle.stale())
        .build();
  }

  private Plan suspended(Draft draft) {
    boolean wasSuspended =
        draft.currentPhase() == Phase.Suspended
            && Objects.equals(draft.desired.getDueTime(), draft.current.getDueTime());
    draft.desired.setPhase(Phase.Suspended);
    Conditions.set(
        draft.desired,
        Condition.SCHEDULED,
        false,
        "Suspended",
        "spec.suspend is true",
        draft.now,
        draft.generation);
    return draft
        .schedule(wasSuspended ? ScheduleChange.KEEP : ScheduleChange.REMOVE)
        .claim(ClaimVerdict.Settle.stale())
        .build();
  }

  /**
   * Scheduled for {@code due}. The entry is written only when the status does not already say so: a
   * task whose status shows this due time had its entry written before that status was, and what
   * Redis loses after that (a flush, a failover, a failed write) the resync repairs in bulk.
   */
  private Draft scheduled(Draft draft, Instant due) {
    boolean alreadyScheduled =
        draft.currentPhase() == Phase.Scheduled
            && Times.format(due).equals(draft.current.getDueTime());
    draft.desired.setPhase(Phase.Scheduled);
    Conditions.set(
        draft.desired,
        Condition.SCHEDULED,
        true,
        "Scheduled",
        "due at " + Times.format(due),
        draft.now,
        draft.generation);
    return draft.schedule(alreadyScheduled ? ScheduleChange.KEEP : new ScheduleChange.Write(due));
  }

  /**
   * The annotation delayedtask.io/fire-now asks for a firing at once, as if its time were the due
   * time, whether the task is suspended or not: the status takes that due time and the entry is
   * written due now, so the leader claims it at once; the claim fires it as any other (the Job's
   * name and the ce-id follow from that due time), and the plan that fires it records the value.
   */
  private Plan firingNow(Draft draft, FireNow.Request.At request) {
    Instant due = request.due();
    prepareForDue(draft, due);
    Conditions.remove(draft.desired, Condition.QUEUED); // a fire-now bypasses the queue
    draft.fireNow = request;
    Optional<ClaimedEntry> claim = draft.facts.claim();
    if (claim.isPresent()) {
      return fire(draft, due, claim.get(), true);
    }
    boolean alreadyWritten =
        draft.currentPhase() == Phase.Scheduled
            && Times.format(due).equals(draft.current.getDueTime());
    draft.desired.setPhase(Phase.Scheduled);
    Conditions.set(
        draft.desired,
        Condition.SCHEDULED,
        true,
        TaskEvents.FIRE_NOW,
        "firing now for " + FireNow.ANNOTATION + "=" + request.value(),
        draft.now,
        draft.generation);
    return draft
        .schedule(
            alreadyWritten
                ? ScheduleChange.KEEP
                : new ScheduleChange.Write(due.isAfter(draft.now) ? draft.now : due))
        .build();
  }

  /** The leader claimed the task's entry: fire it, unless the claim is early, moved or too late. */
  private Plan fire(Draft draft, Instant due, ClaimedEntry claim) {
    return fire(draft, due, claim, false);
  }

  /** {@code now}: a fire-now, which fires at once whatever the clocks say of its due time. */
  private Plan fire(Draft draft, Instant due, ClaimedEntry claim, boolean now) {
    DelayedTask task = draft.facts.task();
    scheduled(draft, due); // what the status says until the firing is written
    if (!now && due.isAfter(claim.claimedAt())) {
      // The due time moved later than this claim (the spec changed): wait for the new one.
      return draft.claim(new ClaimVerdict.HandBack(due, Optional.empty())).build();
    }
    if (!now && due.isAfter(draft.now)) {
      // Redis's clock says due, this process's clock not yet: firing now would be early by this
      // clock (and firedTime would come before dueTime). Hand the entry back until this clock gets
      // there, translated to Redis's clock: late by the skew, never early.
      Instant retry = claim.claimedAt().plus(Duration.between(draft.now, due));
      return draft
          .claim(new ClaimVerdict.HandBack(retry, Optional.of(ClaimOutcome.CLOCK_SKEW)))
          .build();
    }
    String jobName =
        JobNames.jobName(task.getMetadata().getName(), task.getMetadata().getUid(), due);
    Optional<Job> existing = Optional.ofNullable(draft.facts.jobs().get(jobName));
    Long deadline = startingDeadline.secondsFor(task).orElse(null);
    if (deadline != null && claim.claimedAt().isAfter(Times.plusSecondsCapped(due, deadline))) {
      // The deadline bounds the Job's creation, not the status write: an earlier attempt may have
      // created the Job and lost its status write. A Job that exists is never followed by Missed.
      return existing.isPresent()
          ? running(draft, existing.get(), due, claim)
          : missed(draft, due, deadline, claim);
    }
    if (task.getSpec().getSink() != null) {
      return delivery(draft, deliveries.sendNext(draft.sinkTask(), due, claim));
    }
    if (task.getSpec().getJobTemplate() == null) {
      return recordFired(draft, due, claim);
    }
    if (existing.isPresent()) {
      return running(draft, existing.get(), due, claim);
    }
    if (draft.facts.admissionHold()) {
      return awaitingAdmissionPolicy(draft, claim, "spec.jobTemplate: no Job is created");
    }
    if (draft.facts.jobCreation().isEmpty()) {
      return draft
          .schedule(ScheduleChange.KEEP)
          .jobToCreate(JobFactory.jobFor(task, due, draft.now))
          .build();
    }
    return afterCreating(draft, due, claim, draft.facts.jobCreation().get());
  }

  /**
   * The plan with a sink task's delivery part ({@link DeliveryDecisions}, which wrote the desired
   * status already): each part it decided is the plan's as it is.
   */
  private static Plan delivery(Draft draft, DeliveryPlan part) {
    if (part.awaitAdmission().isPresent()) {
      return awaitingAdmissionPolicy(
          draft, part.awaitAdmission().get().claim(), part.awaitAdmission().get().what());
    }
    part.schedule().ifPresent(draft::schedule);
    part.claim().ifPresent(draft::claim);
    draft.delivery = part.send();
    draft.deliveryMetric = part.counted();
    draft.extraEvents.addAll(part.events());
    return draft.build();
  }

  /**
   * How soon a task held back for the admission policy is decided again: well within 30 s of the
   * policy's return.
   */
  static final Duration ADMISSION_POLICY_RECHECK = Duration.ofSeconds(10);

  /**
   * Fail closed: the task is due, but the admission policy that checked its author's rights is
   * missing, so the Job (or the token) that would act with the operator's rights is not made. The
   * task keeps its phase with Ready=False ({@link Readiness#ADMISSION_POLICY_MISSING}), a Warning
   * Event the first time, and the claim comes back every {@link #ADMISSION_POLICY_RECHECK}; its
   * startingDeadlineSeconds still counts (checked before this on every claim).
   */
  private static Plan awaitingAdmissionPolicy(Draft draft, ClaimedEntry claim, String what) {
    boolean refused = draft.facts.admissionPolicyMissing().isEmpty();
    String reason = refused ? Readiness.NOT_ADMITTED : Readiness.ADMISSION_POLICY_MISSING;
    String message =
        refused
            ? "not admitted (" + what + "): " + draft.facts.notAdmitted().orElseThrow()
            : "waiting for the admission policy ("
                + what
                + "): "
                + draft.facts.admissionPolicyMissing().orElseThrow();
    draft.hold = new Readiness.Hold(reason, message);
    boolean saidBefore =
        Conditions.find(draft.current, Condition.READY)
            .filter(ready -> reason.equals(ready.getReason()))
            .isPresent();
    if (!saidBefore) {
      draft.extraEvents.add(
          TaskEvent.warning(
              refused ? TaskEvents.NOT_ADMITTED : TaskEvents.ADMISSION_POLICY_MISSING, message));
    }
    return draft
        .schedule(ScheduleChange.KEEP)
        .claim(
            new ClaimVerdict.HandBack(
                claim.claimedAt().plus(ADMISSION_POLICY_RECHECK),
                Optional.of(ClaimOutcome.ADMISSION_POLICY_MISSING)))
        .build();
  }

  /** The API server has answered the creation of the Job this firing named. */
  private Plan afterCreating(Draft draft, Instant due, ClaimedEntry claim, JobCreation creation) {
    draft.schedule(ScheduleChange.KEEP);
    if (creation instanceof JobCreation.Created created) {
      return running(draft, created.job(), due, claim);
    }
    if (creation instanceof JobCreation.AlreadyOurs ours) {
      return running(draft, ours.job(), due, claim);
    }
    if (creation instanceof JobCreation.Foreign foreign) {
      return failedToCreate(
          draft,
          "a Job named "
              + foreign.jobName()
              + " already exists and is not controlled by "
              + "this task, so it was left alone; delete or rename that Job, then change spec.runAt or spec.delay");
    }
    if (creation instanceof JobCreation.Refused refused) {
      return failedToCreate(
          draft, "the API server refused Job " + refused.jobName() + ": " + refused.reason());
    }
    JobCreation.Transient failure = (JobCreation.Transient) creation;
    return draft
        .claim(
            new ClaimVerdict.Backoff(
                "creating Job " + failure.jobName() + " failed: " + failure.reason()))
        .build();
  }

  private Plan recordFired(Draft draft, Instant due, ClaimedEntry claim) {
    DelayedTaskStatus desired = draft.desired;
    String firedTime = Times.format(draft.now);
    desired.setPhase(Phase.Fired);
    desired.setFiredTime(firedTime);
    desired.setMessage(null);
    Conditions.set(
        desired,
        Condition.SCHEDULED,
        false,
        "Fired",
        "fired at " + firedTime,
        draft.now,
        draft.generation);
    Conditions.set(
        desired,
        Condition.FIRED,
        true,
        "Fired",
        "fired at " + firedTime,
        draft.now,
        draft.generation);
    return draft
        .schedule(ScheduleChange.KEEP)
        .claim(ClaimVerdict.Settle.fired(ClaimOutcome.FIRED, due, claim.claimedAt()))
        .build();
  }

  /**
   * The task's Job exists (created now, or by an earlier attempt): phase Running. Its JobCreated
   * Event goes with the status write that records it, so a retry after a lost status write, which
   * finds the Job already there, records it then, and a write that succeeded is not followed by a
   * second one (the task is Running for this due time, and never decided here again).
   */
  private Plan running(Draft draft, Job job, Instant due, ClaimedEntry claim) {
    DelayedTaskStatus desired = draft.desired;
    String jobName = job.getMetadata().getName();
    Optional<Map<String, String>> annotations =
        Optional.ofNullable(job.getMetadata().getAnnotations());
    // A retry after a lost status write finds the Job already there: report its first firing time.
    String firedTime =
        annotations.map(all -> all.get(TaskLabels.FIRED_TIME)).orElse(Times.format(draft.now));
    draft.extraEvents.add(
        TaskEvent.normal(
            TaskEvents.JOB_CREATED,
            "Created Job "
                + jobName
                + " (due "
                + annotations.map(all -> all.get(TaskLabels.DUE_TIME)).orElse(Times.format(due))
                + ")"));
    desired.setPhase(Phase.Running);
    desired.setJobName(jobName);
    desired.setFiredTime(firedTime);
    desired.setMessage(null);
    Conditions.set(
        desired,
        Condition.SCHEDULED,
        false,
        "Fired",
        "fired at " + firedTime,
        draft.now,
        draft.generation);
    Conditions.set(
        desired,
        Condition.FIRED,
        true,
        "JobCreated",
        "created Job " + jobName,
        draft.now,
        draft.generation);
    // A Job an earlier attempt created may have finished already (and been deleted since, its
    // outcome kept from the delete notification): its outcome is recorded in this same write, as no
    // later event of that Job will come to reconcile the task again.
    applyOutcomeOf(draft, job);
    return draft
        .schedule(ScheduleChange.KEEP)
        .claim(ClaimVerdict.Settle.fired(ClaimOutcome.JOB_CREATED, due, claim.claimedAt()))
        .build();
  }

  private Plan missed(Draft draft, Instant due, long deadline, ClaimedEntry claim) {
    DelayedTaskStatus desired = draft.desired;
    String message =
        "did not fire: it could not start within startingDeadlineSeconds="
            + deadline
            + " of its due time "
            + Times.format(due)
            + " (checked at "
            + Times.format(claim.claimedAt())
            + ")";
    desired.setPhase(Phase.Missed);
    desired.setMessage(message);
    Conditions.set(
        desired, Condition.SCHEDULED, false, "Missed", message, draft.now, draft.generation);
    Conditions.set(desired, Condition.FIRED, false, "Missed", message, draft.now, draft.generation);
    return draft
        .schedule(ScheduleChange.KEEP)
        .claim(ClaimVerdict.Settle.as(ClaimOutcome.MISSED))
        .build();
  }

  private Plan failedToCreate(Draft draft, String message) {
    DelayedTaskStatus desired = draft.desired;
    desired.setPhase(Phase.Failed);
    desired.setMessage(message);
    Conditions.set(
        desired, Condition.SCHEDULED, false, "Failed", message, draft.now, draft.generation);
    Conditions.set(
        desired, Condition.FAILED, true, "JobCreateFailed", message, draft.now, draft.generation);
    return draft
        .schedule(ScheduleChange.KEEP)
        .claim(ClaimVerdict.Settle.as(ClaimOutcome.FAILED))
        .build();
  }

  /**
   * Fired (or finished) for this due time: never again. Only the Job's outcome and the TTL remain.
   */
  private Plan afterFiring(Draft draft) {
    draft.schedule(ScheduleChange.KEEP).claim(ClaimVerdict.Settle.stale());
    if (draft.desired.getPhase() == Phase.Running) {
      applyJobOutcome(draft);
    }
    return draft.build();
  }

  /**
   * The Job's Complete / Failed condition moves a Running task to Succeeded / Failed; a Job that is
   * gone moves it to Failed, so a task never stays Running without a Job. (The caller confirms a
   * Job missing from its cache with the API server before it says so in the facts.)
   */
  private static void applyJobOutcome(Draft draft) {
    DelayedTaskStatus desired = draft.desired;
    String jobName = desired.getJobName();
    if (jobName == null) {
      return;
    }
    Job job = draft.facts.jobs().get(jobName);
    if (job == null) {
      String message =
          "Job "
              + jobName
              + " was deleted before its outcome was recorded; change spec.runAt or "
              + "spec.delay to run it again";
      desired.setPhase(Phase.Failed);
      desired.setMessage(message);
      Conditions.set(
          desired, Condition.FAILED, true, "JobGone", message, draft.now, draft.generation);
      return;
    }
    applyOutcomeOf(draft, job);
  }

  /** A Complete or Failed condition of the task's Job moves the task to Succeeded or Failed. */
  private static void applyOutcomeOf(Draft draft, Job job) {
    DelayedTaskStatus desired = draft.desired;
    String jobName = job.getMetadata().getName();
    if (job.getStatus() == null || job.getStatus().getConditions() == null) {
      return;
    }
    for (JobCondition condition : job.getStatus().getConditions()) {
      if (!"True".equals(condition.getStatus())) {
        continue;
      }
      if ("Complete".equals(condition.getType())) {
        desired.setPhase(Phase.Succeeded);
        desired.setMessage(null);
        Conditions.set(
            desired,
            Condition.COMPLETE,
            true,
            "JobComplete",
            "Job " + jobName + " completed",
            draft.now,
            draft.generation);
        return;
      }
      if ("Failed".equals(condition.getType())) {
        String why =
            condition.getMessage() != null
                ? condition.getMessage()
                : condition.getReason() != null ? condition.getReason() : "no reason given";
        String message = "Job " + jobName + " failed: " + why;
        desired.setPhase(Phase.Failed);
        desired.setMessage(message);
        Conditions.set(
            desired, Condition.FAILED, true, "JobFailed", message, draft.now, draft.generation);
        return;
      }
    }
  }

  /** A finished task: wait out its TTL, then delete it, unless a GitOps tool manages it. */
  private static void applyTtl(Draft draft) {
    SecondsSetting finishedTtl = draft.finishedTtl;
    DelayedTask task = draft.facts.task();
    Optional<Long> ttl = finishedTtl.secondsFor(task);
    if (ttl.isEmpty()) {
      return;
    }
    Instant finished =
        Conditions.lastTransition(draft.desired)
            .or(() -> Optional.ofNullable(Times.parseOrNull(draft.desired.getFiredTime())))
            .orElse(draft.now);
    Duration remaining = Duration.between(draft.now, Times.plusSecondsCapped(finished, ttl.get()));
    if (!remaining.isNegative() && !remaining.isZero()) {
      // Capped: JOSDK's timer takes milliseconds; a TTL past the cap is decided again then.
      draft.requeue =
          Optional.of(remaining.compareTo(LONGEST_REQUEUE) > 0 ? LONGEST_REQUEUE : remaining);
      return;
    }
    Optional<GitOpsOwner> owner = GitOpsOwner.of(task);
    if (owner.isEmpty()) {
      draft.deleteTask = true;
      return;
    }
    draft.readyNote = owner.get().keptMessage();
    boolean saidBefore =
        Conditions.find(draft.current, Condition.READY)
            .map(Condition::getMessage)
            .filter(message -> message != null && message.contains(owner.get().keptMessage()))
            .isPresent();
    if (!saidBefore) {
      draft.extraEvents.add(
          TaskEvent.normal(
              TaskEvents.TTL_SKIPPED,
              "ttlSecondsAfterFinished="
                  + ttl.get()
                  + " has passed, but the task is "
                  + owner.get().keptMessage()));
    }
  }

  /** A new due time (or a first one): the previous firing's results no longer describe the task. */
  private static void prepareForDue(Draft draft, Instant due) {
    DelayedTaskStatus desired = draft.desired;
    String dueTime = Times.format(due);
    if (!dueTime.equals(desired.getDueTime()) || desired.getPhase() == Phase.Invalid) {
      desired.setFiredTime(null);
      desired.setJobName(null);
      desired.setDelivery(null);
      desired.setSinkUri(null);
      Conditions.remove(desired, Condition.FIRED);
      Conditions.remove(desired, Condition.COMPLETE);
      Conditions.remove(desired, Condition.FAILED);
      Conditions.remove(desired, Condition.QUEUED);
    }
    desired.setDueTime(dueTime);
    desired.setMessage(null);
  }

  /**
   * The Event a change of phase records (docs/reference.md: one per transition); also a Scheduled
   * task that moved to a new due time, and an Invalid one whose reason changed. Running records
   * none here: {@link #running} adds JobCreated.
   */
  static Optional<TaskEvent> transition(DelayedTaskStatus current, DelayedTaskStatus desired) {
    Phase before = current == null ? null : current.getPhase();
    Phase after = desired.getPhase();
    boolean newDue = current == null || !Objects.equals(current.getDueTime(), desired.getDueTime());
    boolean newReason =
        current == null || !Objects.equals(current.getMessage(), desired.getMessage());
    if (before == after
        && !(after == Phase.Scheduled && newDue)
        && !(after == Phase.Invalid && newReason)) {
      return Optional.empty();
    }
    return Optional.ofNullable(
        switch (after) {
          case Scheduled ->
              TaskEvent.normal(
                  TaskEvents.SCHEDULED, "Scheduled to fire at " + desired.getDueTime());
          case Suspended ->
              TaskEvent.normal(
                  TaskEvents.SUSPENDED, "Suspended; it will not fire until spec.suspend is false");
          case Invalid -> TaskEvent.warning(TaskEvents.INVALID, desired.getMessage());
          case Fired ->
              TaskEvent.normal(
                  TaskEvents.FIRED,
                  "Fired at " + desired.getFiredTime() + " (due " + desired.getDueTime() + ")");
          case Running -> null;
          case Succeeded ->
              desired.getJobName() == null
                  ? null // a sink's: DeliveryDecisions records Delivered
                  : TaskEvent.normal(
                      TaskEvents.SUCCEEDED, "Job " + desired.getJobName() + " completed");
          case Failed -> TaskEvent.warning(TaskEvents.FAILED, desired.getMessage());
          case Missed -> TaskEvent.warning(TaskEvents.MISSED, "Missed: " + desired.getMessage());
        });
  }

  /** A plan being put together: the current status, the desired one, and the rest. */
  static final class Draft {
    final TaskFacts facts;
    final SecondsSetting finishedTtl;
    final DelayedTaskStatus current;
    final DelayedTaskStatus desired;
    final Long generation;
    final Instant now;
    ScheduleChange schedule = ScheduleChange.KEEP;
    Optional<Job> jobToCreate = Optional.empty();
    Optional<Job> jobToCheck = Optional.empty();
    Optional<ClaimVerdict> claim = Optional.empty();
    Optional<Duration> requeue = Optional.empty();
    boolean deleteTask;
    Optional<DeliveryAttempt> delivery = Optional.empty();
    Optional<DeliveryCount> deliveryMetric = Optional.empty();
    String readyNote;
    Readiness.Hold hold;

    /**
     * A fire-now this plan acts on: recorded in the status once the plan fires (or finishes) the
     * task.
     */
    FireNow.Request.At fireNow;

    final List<TaskEvent> extraEvents = new ArrayList<>();

    Draft(TaskFacts facts, SecondsSetting finishedTtl) {
      this(facts, finishedTtl, Conditions.copy(facts.task().getStatus()));
    }

    Draft(TaskFacts facts, SecondsSetting finishedTtl, DelayedTaskStatus desired) {
      this.facts = facts;
      this.finishedTtl = finishedTtl;
      this.current = facts.task().getStatus();
      this.desired = Conditions.copy(desired);
      this.generation = facts.task().getMetadata().getGeneration();
      this.now = facts.now();
      this.desired.setObservedGeneration(generation);
      facts.admissionRecord().ifPresent(this.desired::setAdmission);
    }

    Phase currentPhase() {
      return current == null ? null : current.getPhase();
    }

    /** The sink task as {@link DeliveryDecisions} sees it; it writes {@link #desired}. */
    DeliveryDecisions.SinkTask sinkTask() {
      return new DeliveryDecisions.SinkTask(
          facts.task(),
          current,
          desired,
          now,
          generation,
          facts.claim(),
          facts.deliveryInFlight(),
          facts.admissionHold());
    }

    Draft schedule(ScheduleChange change) {
      this.schedule = change;
      return this;
    }

    /** A claim is settled only if this reconcile was woken by one. */
    Draft claim(ClaimVerdict verdict) {
      this.claim = facts.claim().isPresent() ? Optional.of(verdict) : Optional.empty();
      return this;
    }

    Draft jobToCreate(Job job) {
      this.jobToCreate = Optional.of(job);
      return this;
    }

    Plan build() {
      if (desired.getPhase() != null
          && desired.getPhase().isFinished()
          && jobToCreate.isEmpty()
          && TaskState.nextAttempt(desired).isEmpty()) {
        // Whichever decision finished the task (a firing, a Job's outcome) also starts its TTL:
        // its own status write does not reconcile it again.
        applyTtl(this);
      }
      if (fireNow != null
          && (delivery.isPresent()
              || desired.getPhase() == Phase.Running
              || (desired.getPhase() != null && desired.getPhase().isFinished()))) {
        desired.setFireNowHandled(fireNow.value());
        extraEvents.add(
            0,
            TaskEvent.normal(
                TaskEvents.FIRE_NOW,
                "Fired now for "
                    + FireNow.ANNOTATION
                    + "="
                    + fireNow.value()
                    + ", as if that were its due time"));
      }
      Readiness.apply(desired, generation, now, readyNote, hold);
      List<TaskEvent> events = new ArrayList<>();
      if (jobToCreate.isEmpty() && jobToCheck.isEmpty()) {
        transition(current, desired).ifPresent(events::add);
      }
      events.addAll(extraEvents);
      return new Plan(
          schedule,
          jobToCreate,
          desired,
          events,
          claim,
          requeue,
          deleteTask,
          delivery,
          deliveryMetric,
          jobToCheck);
    }
  }
}
