package io.delayedtask.operator.reconcile;

import io.delayedtask.operator.api.v1alpha1.Condition;
import io.delayedtask.operator.api.v1alpha1.DelayedTask;
import io.delayedtask.operator.api.v1alpha1.DelayedTaskStatus;
import io.delayedtask.operator.api.v1alpha1.Phase;
import io.delayedtask.operator.reconcile.TaskEvents;
import io.delayedtask.operator.reconcile.TaskLocks;
import io.delayedtask.operator.schedule.ClaimedEntry;
import io.delayedtask.operator.schedule.Disposition;
import io.delayedtask.operator.schedule.DueEntryHandler;
import io.delayedtask.operator.task.Conditions;
import io.delayedtask.operator.task.JobFactory;
import io.delayedtask.operator.task.JobNames;
import io.delayedtask.operator.task.Readiness;
import io.delayedtask.operator.task.ScheduleIds;
import io.delayedtask.operator.task.SpecValidator;
import io.delayedtask.operator.task.TaskLabels;
import io.delayedtask.operator.task.TaskState;
import io.delayedtask.operator.task.Times;
import io.delayedtask.operator.task.Validation;
import io.fabric8.kubernetes.api.model.batch.v1.Job;
import io.fabric8.kubernetes.client.KubernetesClient;
import io.fabric8.kubernetes.client.KubernetesClientException;
import java.time.Clock;
import java.time.Duration;
import java.time.Instant;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.ConcurrentHashMap;
import java.util.function.BooleanSupplier;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;
import org.slf4j.MDC;

/**
 * Fires one claimed schedule entry: looks at the task as the API server has it now, skips what is
 * stale, marks it Missed past its deadline, else creates its Job (or records the firing) and
 * acknowledges only once the Job and the status are both written.
 */
public class TaskFirer implements DueEntryHandler {
  private static final Logger LOG = LoggerFactory.getLogger(TaskFirer.class);
  private static final Duration FIRST_RETRY = Duration.ofMillis(500);
  private static final Duration MAX_RETRY = Duration.ofSeconds(30);

  private final KubernetesClient client;
  private final SpecValidator validator;
  private final TaskEvents events;
  private final FireMetrics metrics;
  private final Clock clock;
  private final TaskLocks locks;
  private final BooleanSupplier leading;
  /** Consecutive failed attempts per entry id, for the backoff; forgotten once the entry is acknowledged. */
  private final Map<String, Integer> attempts = new ConcurrentHashMap<>();

  public TaskFirer(KubernetesClient client, SpecValidator validator, TaskEvents events, FireMetrics metrics,
      Clock clock, TaskLocks locks, BooleanSupplier leading) {
    this.locks = locks;
    this.leading = leading;
    this.client = client;
    this.validator = validator;
    this.events = events;
    this.metrics = metrics;
    this.clock = clock;
  }

  @Override
  public Disposition handle(ClaimedEntry entry) {
    if (!leading.getAsBoolean()) {
      // Leadership ended while this claim waited for a worker: hand it back for the new leader.
      return Disposition.retryAt(entry.claimedAt());
    }
    Optional<ScheduleIds.TaskRef> ref = ScheduleIds.parse(entry.id());
    if (ref.isEmpty()) {
      LOG.warn("Schedule entry '{}' is not a task id (namespace/name/uid); dropping it", entry.id());
      return done(entry, FireMetrics.Outcome.STALE);
    }
    MDC.put("resource.namespace", ref.get().namespace());
    MDC.put("resource.name", ref.get().name());
    try {
      return locks.withLock(ref.get().namespace(), ref.get().name(), () -> fire(entry, ref.get()));
    } catch (RuntimeException e) {
      if (ApiErrors.isTransient(e)) {
        return retry(entry, "the API server did not answer: " + e.getMessage());
      }
      throw e;
    } finally {
      MDC.remove("resource.namespace");
      MDC.remove("resource.name");
    }
  }

  private Disposition fire(ClaimedEntry entry, ScheduleIds.TaskRef ref) {
    DelayedTask task = client.resources(DelayedTask.class).inNamespace(ref.namespace()).withName(ref.name()).get();
    if (task == null || !ref.uid().equals(task.getMetadata().getUid())
        || task.getMetadata().getDeletionTimestamp() != null) {
      LOG.debug("Entry {} is stale: the task is gone or was re-created", entry.id());
      return done(entry, FireMetrics.Outcome.STALE);
    }
    if (!(validator.validate(task) instanceof Validation.Valid valid)) {
      return done(entry, FireMetrics.Outcome.STALE); // the reconciler reports it Invalid
    }
    Instant due = valid.due();
    if (due.isAfter(entry.claimedAt())) {
      // The due time moved later than this claim (the spec changed): wait for the new one.
      attempts.remove(entry.id());
      return Disposition.retryAt(due);
    }
    if (task.getSpec().isSuspended() || TaskState.handledFor(task.getStatus(), due)) {
      return done(entry, FireMetrics.Outcome.STALE);
    }
    Optional<Disposition> clocksDisagree = waitForThisClock(entry, due);
    if (clocksDisagree.isPresent()) {
      return clocksDisagree.get();
    }
    Long deadline = task.getSpec().getStartingDeadlineSeconds();
    if (deadline != null && entry.claimedAt().isAfter(due.plusSeconds(deadline))) {
      // The deadline bounds the Job's creation, not the status write: an earlier attempt may have
      // created the Job and then lost its status write. A Job that exists is never followed by Missed.
      Optional<Job> created = existingJob(task, due);
      return created.isPresent() ? reportRunning(entry, task, due, created.get())
          : missed(entry, task, due, deadline);
    }
    metrics.lag(Duration.between(due, entry.claimedAt()));
    return task.getSpec().getJobTemplate() == null ? recordFired(entry, task, due) : createJob(entry, task, due);
  }

  /**
   * Redis's clock decided the entry is due; this pod's clock may not agree yet (Redis's clock runs
   * ahead, or this pod's behind). Firing now would be early by this clock, and the firedTime written
   * from it would come before the dueTime. So the entry goes back until this clock reaches the due
   * time, translated to Redis's clock (scores are compared with Redis TIME): a task fires when both
   * clocks say it is due, which makes it late by the skew, never early.
   */
  private Optional<Disposition> waitForThisClock(ClaimedEntry entry, Instant due) {
    Instant now = clock.instant();
    if (!due.isAfter(now)) {
      return Optional.empty();
    }
    Duration remaining = Duration.between(now, due);
    LOG.warn("Redis's clock says the task is due, this pod's clock is {} ms short of its due time {}: the clocks "
        + "disagree (check NTP on the Redis and operator hosts); firing when both say it is due",
        remaining.toMillis(), Times.format(due));
    metrics.outcome(FireMetrics.Outcome.CLOCK_SKEW);
    return Optional.of(Disposition.retryAt(entry.claimedAt().plus(remaining)));
  }

  private Disposition recordFired(ClaimedEntry entry, DelayedTask task, Instant due) {
    Instant firedAt = clock.instant();
    DelayedTaskStatus status = statusFor(task, due);
    status.setPhase(Phase.Fired);
    status.setFiredTime(Times.format(firedAt));
    status.setMessage(null);
    Long generation = task.getMetadata().getGeneration();
    Conditions.set(status, Condition.SCHEDULED, false, "Fired", "fired at " + status.getFiredTime(), firedAt, generation);
    Conditions.set(status, Condition.FIRED, true, "Fired", "fired at " + status.getFiredTime(), firedAt, generation);
    Optional<Disposition> failed = writeStatus(entry, task, status);
    if (failed.isPresent()) {
      return failed.get();
    }
    events.normal(task, TaskEvents.FIRED, "Fired at " + status.getFiredTime() + " (due " + status.getDueTime() + ")");
    return done(entry, FireMetrics.Outcome.FIRED);
  }

  private Disposition createJob(ClaimedEntry entry, DelayedTask task, Instant due) {
    Job wanted = JobFactory.jobFor(task, due, clock.instant());
    String jobName = wanted.getMetadata().getName();
    Job job;
    try {
      job = client.batch().v1().jobs().inNamespace(task.getMetadata().getNamespace()).resource(wanted).create();
      // Recorded now, not after the status write: a retry after a lost status write finds the Job
      // already there and must neither lose this Event nor record it twice.
      events.normal(task, TaskEvents.JOB_CREATED, "Created Job " + jobName + " (due " + Times.format(due) + ")");
    } catch (KubernetesClientException e) {
      // 409 on create is AlreadyExists (or a conflict): look at what is there.
      Job existing = e.getCode() == 409
          ? client.batch().v1().jobs().inNamespace(task.getMetadata().getNamespace()).withName(jobName).get()
          : null;
      if (existing != null) {
        job = existing;
        if (!JobFactory.isControlledBy(job, task)) {
          return failed(entry, task, due, "a Job named " + jobName + " already exists and is not controlled by this "
              + "task, so it was left alone; delete or rename that Job, then change spec.runAt or spec.delay");
        }
      } else if (ApiErrors.isTransient(e)) {
        return retry(entry, "creating Job " + jobName + " failed: " + ApiErrors.reason(e));
      } else {
        return failed(entry, task, due, "the API server refused Job " + jobName + ": " + ApiErrors.reason(e));
      }
    }
    return reportRunning(entry, task, due, job);
  }

  /** This task's Job for this due time, if an earlier attempt created it. */
  private Optional<Job> existingJob(DelayedTask task, Instant due) {
    if (task.getSpec().getJobTemplate() == null) {
      return Optional.empty();
    }
    String jobName = JobNames.jobName(task.getMetadata().getName(), task.getMetadata().getUid(), due);
    return Optional.ofNullable(client.batch().v1().jobs().inNamespace(task.getMetadata().getNamespace())
            .withName(jobName).get())
        .filter(job -> JobFactory.isControlledBy(job, task));
  }

  /** The task's Job exists (created now, or by an earlier attempt): phase Running. */
  private Disposition reportRunning(ClaimedEntry entry, DelayedTask task, Instant due, Job job) {
    String jobName = job.getMetadata().getName();
    Instant now = clock.instant();
    // A retry after a lost status write finds the Job already there: report its first firing time.
    String firedTime = Optional.ofNullable(job.getMetadata().getAnnotations())
        .map(a -> a.get(TaskLabels.FIRED_TIME))
        .orElse(Times.format(now));
    Long generation = task.getMetadata().getGeneration();
    DelayedTaskStatus status = statusFor(task, due);
    status.setPhase(Phase.Running);
    status.setJobName(jobName);
    status.setFiredTime(firedTime);
    status.setMessage(null);
    Conditions.set(status, Condition.SCHEDULED, false, "Fired", "fired at " + firedTime, now, generation);
    Conditions.set(status, Condition.FIRED, true, "JobCreated", "created Job " + jobName, now, generation);
    Optional<Disposition> failed = writeStatus(entry, task, status);
    if (failed.isPresent()) {
      return failed.get();
    }
    return done(entry, FireMetrics.Outcome.JOB_CREATED);
  }

  private Disposition missed(ClaimedEntry entry, DelayedTask task, Instant due, long deadline) {
    Instant now = clock.instant();
    String message = "did not fire: it could not start within startingDeadlineSeconds=" + deadline
        + " of its due time " + Times.format(due) + " (checked at " + Times.format(entry.claimedAt()) + ")";
    DelayedTaskStatus status = statusFor(task, due);
    status.setPhase(Phase.Missed);
    status.setMessage(message);
    Long generation = task.getMetadata().getGeneration();
    Conditions.set(status, Condition.SCHEDULED, false, "Missed", message, now, generation);
    Conditions.set(status, Condition.FIRED, false, "Missed", message, now, generation);
    Optional<Disposition> failed = writeStatus(entry, task, status);
    if (failed.isPresent()) {
      return failed.get();
    }
    events.warning(task, TaskEvents.MISSED, "Missed: " + message);
    return done(entry, FireMetrics.Outcome.MISSED);
  }

  private Disposition failed(ClaimedEntry entry, DelayedTask task, Instant due, String message) {
    Instant now = clock.instant();
    DelayedTaskStatus status = statusFor(task, due);
    status.setPhase(Phase.Failed);
    status.setMessage(message);
    Long generation = task.getMetadata().getGeneration();
    Conditions.set(status, Condition.SCHEDULED, false, "Failed", message, now, generation);
    Conditions.set(status, Condition.FAILED, true, "JobCreateFailed", message, now, generation);
    Optional<Disposition> writeFailed = writeStatus(entry, task, status);
    if (writeFailed.isPresent()) {
      return writeFailed.get();
    }
    events.warning(task, TaskEvents.FAILED, message);
    return done(entry, FireMetrics.Outcome.FAILED);
  }

  private static DelayedTaskStatus statusFor(DelayedTask task, Instant due) {
    DelayedTaskStatus status = Conditions.copy(task.getStatus());
    status.setDueTime(Times.format(due));
    return status;
  }

  /**
   * Writes the status with the resourceVersion we read (optimistic locking), so a concurrent spec
   * change is never overwritten: a conflict is retried with a fresh read. Empty means written.
   */
  private Optional<Disposition> writeStatus(ClaimedEntry entry, DelayedTask task, DelayedTaskStatus status) {
    Readiness.apply(status, task.getMetadata().getGeneration(), clock.instant());
    task.setStatus(status);
    try {
      client.resources(DelayedTask.class).inNamespace(task.getMetadata().getNamespace()).resource(task).updateStatus();
      return Optional.empty();
    } catch (KubernetesClientException e) {
      if (ApiErrors.isNotFound(e)) {
        return Optional.of(done(entry, FireMetrics.Outcome.STALE));
      }
      if (ApiErrors.isTransient(e)) {
        return Optional.of(retry(entry, "writing the status failed: " + ApiErrors.reason(e)));
      }
      throw e;
    }
  }

  private Disposition done(ClaimedEntry entry, FireMetrics.Outcome outcome) {
    attempts.remove(entry.id());
    metrics.outcome(outcome);
    return Disposition.acknowledge();
  }

  private Disposition retry(ClaimedEntry entry, String why) {
    int attempt = attempts.merge(entry.id(), 1, Integer::sum);
    Duration delay = backoff(attempt);
    LOG.warn("Will retry in {} ms (attempt {}): {}", delay.toMillis(), attempt, why);
    metrics.outcome(FireMetrics.Outcome.RETRY);
    return Disposition.retryAt(clock.instant().plus(delay));
  }

  static Duration backoff(int attempt) {
    int shift = Math.min(attempt - 1, 16);
    Duration delay = FIRST_RETRY.multipliedBy(1L << shift);
    return delay.compareTo(MAX_RETRY) > 0 ? MAX_RETRY : delay;
  }
}
