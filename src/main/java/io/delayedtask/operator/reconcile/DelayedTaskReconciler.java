package io.delayedtask.operator.reconcile;

import io.delayedtask.operator.api.v1alpha1.Condition;
import io.delayedtask.operator.api.v1alpha1.DelayedTask;
import io.delayedtask.operator.api.v1alpha1.DelayedTaskStatus;
import io.delayedtask.operator.api.v1alpha1.Phase;
import io.delayedtask.operator.schedule.ScheduleUnavailableException;
import io.delayedtask.operator.schedule.TaskSchedule;
import io.delayedtask.operator.task.Conditions;
import io.delayedtask.operator.task.FinishedTtl;
import io.delayedtask.operator.task.GitOpsOwner;
import io.delayedtask.operator.task.JobFactory;
import io.delayedtask.operator.task.Readiness;
import io.delayedtask.operator.task.ScheduleIds;
import io.delayedtask.operator.task.SpecValidator;
import io.delayedtask.operator.task.TaskLabels;
import io.delayedtask.operator.task.TaskState;
import io.delayedtask.operator.task.Times;
import io.delayedtask.operator.task.Validation;
import io.fabric8.kubernetes.api.model.batch.v1.Job;
import io.fabric8.kubernetes.api.model.batch.v1.JobCondition;
import io.fabric8.kubernetes.client.KubernetesClientException;
import io.javaoperatorsdk.operator.api.config.informer.InformerEventSourceConfiguration;
import io.javaoperatorsdk.operator.api.reconciler.Cleaner;
import io.javaoperatorsdk.operator.api.reconciler.Context;
import io.javaoperatorsdk.operator.api.reconciler.DeleteControl;
import io.javaoperatorsdk.operator.api.reconciler.EventSourceContext;
import io.javaoperatorsdk.operator.api.reconciler.Reconciler;
import io.javaoperatorsdk.operator.api.reconciler.UpdateControl;
import io.javaoperatorsdk.operator.processing.event.ResourceID;
import io.javaoperatorsdk.operator.processing.event.source.EventSource;
import io.javaoperatorsdk.operator.processing.event.source.informer.InformerEventSource;
import java.time.Clock;
import java.time.Duration;
import java.time.Instant;
import java.util.List;
import java.util.Objects;
import java.util.Optional;
import java.util.Set;
import java.util.function.BooleanSupplier;
import java.util.stream.Collectors;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Keeps the schedule entry of each DelayedTask in line with its spec and its status in line with
 * what happened: validation, due time, suspend, the Job's outcome, and the TTL after finishing.
 * Firing itself is the leader's poller's job ({@code fire.TaskFirer}).
 */
public class DelayedTaskReconciler implements Reconciler<DelayedTask>, Cleaner<DelayedTask> {
  /** How long to wait before trying again when Redis is unreachable. */
  static final Duration REDIS_RETRY = Duration.ofSeconds(5);
  private static final Logger LOG = LoggerFactory.getLogger(DelayedTaskReconciler.class);

  private final TaskSchedule schedule;
  private final SpecValidator validator;
  private final TaskEvents events;
  private final Clock clock;
  private final TaskLocks locks;
  private final BooleanSupplier leading;
  private final FinishedTtl finishedTtl;

  /**
   * @param leading whether this instance leads; JOSDK keeps reconciling after the lease is lost when
   *     the process does not exit (in-process tests), and a former leader must not write then
   */
  public DelayedTaskReconciler(TaskSchedule schedule, SpecValidator validator, TaskEvents events, Clock clock,
      TaskLocks locks, BooleanSupplier leading) {
    this(schedule, validator, events, clock, locks, leading, FinishedTtl.none());
  }

  /** @param finishedTtl the TTL of finished tasks, with the operator-wide default */
  public DelayedTaskReconciler(TaskSchedule schedule, SpecValidator validator, TaskEvents events, Clock clock,
      TaskLocks locks, BooleanSupplier leading, FinishedTtl finishedTtl) {
    this.finishedTtl = finishedTtl;
    this.locks = locks;
    this.leading = leading;
    this.schedule = schedule;
    this.validator = validator;
    this.events = events;
    this.clock = clock;
  }

  @Override
  public List<EventSource<?, DelayedTask>> prepareEventSources(EventSourceContext<DelayedTask> context) {
    // Only the Jobs we created (they carry the task-uid label), mapped to their controlling task.
    var jobs = InformerEventSourceConfiguration.from(Job.class, DelayedTask.class)
        .withLabelSelector(TaskLabels.TASK_UID)
        .withNamespacesInheritedFromController()
        .withSecondaryToPrimaryMapper(DelayedTaskReconciler::owningTask)
        .build();
    return List.of(new InformerEventSource<>(jobs, context));
  }

  static Set<ResourceID> owningTask(Job job) {
    if (job.getMetadata().getOwnerReferences() == null) {
      return Set.of();
    }
    return job.getMetadata().getOwnerReferences().stream()
        .filter(ref -> Boolean.TRUE.equals(ref.getController()) && "DelayedTask".equals(ref.getKind()))
        .map(ref -> new ResourceID(ref.getName(), job.getMetadata().getNamespace()))
        .collect(Collectors.toSet());
  }

  @Override
  public UpdateControl<DelayedTask> reconcile(DelayedTask cached, Context<DelayedTask> context) {
    if (!leading.getAsBoolean()) {
      return UpdateControl.noUpdate();
    }
    return locks.withLock(cached.getMetadata().getNamespace(), cached.getMetadata().getName(),
        () -> reconcileLocked(cached, context));
  }

  private UpdateControl<DelayedTask> reconcileLocked(DelayedTask cached, Context<DelayedTask> context) {
    // The informer cache can lag behind the firer's status writes (Running, Fired, Missed); deciding
    // from a stale copy would put a fired task back to Scheduled. So decide from the API server's
    // current version, and write with its resourceVersion.
    DelayedTask task = context.getClient().resources(DelayedTask.class)
        .inNamespace(cached.getMetadata().getNamespace()).withName(cached.getMetadata().getName()).get();
    if (task == null || !Objects.equals(task.getMetadata().getUid(), cached.getMetadata().getUid())) {
      return UpdateControl.noUpdate();
    }
    Instant now = clock.instant();
    DelayedTaskStatus current = task.getStatus();
    DelayedTaskStatus desired = Conditions.copy(current);
    Long generation = task.getMetadata().getGeneration();
    desired.setObservedGeneration(generation);
    String id = ScheduleIds.idOf(task);
    boolean redisFailed = false;

    Validation validation = validator.validate(task);
    Duration requeue = null;
    Optional<GitOpsOwner> keptFor = Optional.empty();
    if (validation instanceof Validation.Invalid invalid) {
      desired.setPhase(Phase.Invalid);
      desired.setMessage(invalid.message());
      desired.setDueTime(null);
      Conditions.set(desired, Condition.SCHEDULED, false, "Invalid", invalid.message(), now, generation);
      redisFailed = !cancel(id);
    } else {
      Instant due = ((Validation.Valid) validation).due();
      if (TaskState.handledFor(current, due)) {
        // Fired (or finished) for this due time: never again. Only the Job's outcome and the TTL remain.
        redisFailed = !cancel(id);
        if (desired.getPhase() == Phase.Running) {
          applyJobOutcome(task, desired, context, now, generation);
        }
        if (desired.getPhase().isFinished()) {
          Optional<Duration> ttl = remainingTtl(task, desired, now);
          if (ttl.isPresent() && (ttl.get().isZero() || ttl.get().isNegative())) {
            keptFor = GitOpsOwner.of(task);
            if (keptFor.isEmpty()) {
              return deleteExpired(task, context);
            }
          } else {
            requeue = ttl.orElse(null);
          }
        }
      } else {
        prepareForDue(desired, due, now, generation);
        if (task.getSpec().isSuspended()) {
          desired.setPhase(Phase.Suspended);
          Conditions.set(desired, Condition.SCHEDULED, false, "Suspended", "spec.suspend is true", now, generation);
          redisFailed = !cancel(id);
        } else {
          desired.setPhase(Phase.Scheduled);
          Conditions.set(desired, Condition.SCHEDULED, true, "Scheduled", "due at " + Times.format(due), now,
              generation);
          redisFailed = !schedule(id, due);
        }
      }
    }
    if (redisFailed) {
      requeue = requeue == null || requeue.compareTo(REDIS_RETRY) > 0 ? REDIS_RETRY : requeue;
    }
    Readiness.apply(desired, generation, now, keptFor.map(GitOpsOwner::keptMessage).orElse(null));
    if (!desired.equals(current) && writeInvalidOrWarn(task, desired, context)) {
      recordTransition(task, current, desired);
      keptFor.ifPresent(owner -> recordKept(task, current, owner));
    }
    UpdateControl<DelayedTask> control = UpdateControl.noUpdate();
    return requeue == null ? control : control.rescheduleAfter(requeue);
  }

  /**
   * The firer writes the status too (Running, Fired, Missed), so a status built from a stale cached
   * task must never overwrite its work: the write is a PUT with the resourceVersion we read
   * (optimistic locking). On a conflict nothing is written; the newer version's own event
   * reconciles the task again.
   */
  private static boolean writeStatus(DelayedTask task, DelayedTaskStatus desired, Context<DelayedTask> context) {
    DelayedTaskStatus before = task.getStatus();
    task.setStatus(desired);
    try {
      context.getClient().resource(task).updateStatus();
      return true;
    } catch (KubernetesClientException e) {
      task.setStatus(before);
      if (e.getCode() != 409) {
        throw e;
      }
      LOG.debug("Status not written: the task changed since it was read; reconciling the newer version");
      return false;
    }
  }

  /**
   * An Invalid task is reported on itself even when its status cannot be written (the API server
   * refuses it): then at least as an Event (one, counted, however often this is retried).
   */
  private boolean writeInvalidOrWarn(DelayedTask task, DelayedTaskStatus desired, Context<DelayedTask> context) {
    try {
      return writeStatus(task, desired, context);
    } catch (KubernetesClientException e) {
      if (desired.getPhase() == Phase.Invalid) {
        events.warning(task, TaskEvents.INVALID, desired.getMessage() + " (the status could not be written: "
            + (e.getStatus() != null && e.getStatus().getMessage() != null ? e.getStatus().getMessage() : e.getMessage())
            + ")");
      }
      throw e;
    }
  }

  /** A new due time (or a first one): the previous firing's results no longer describe the task. */
  private static void prepareForDue(DelayedTaskStatus desired, Instant due, Instant now, Long generation) {
    String dueTime = Times.format(due);
    if (!dueTime.equals(desired.getDueTime()) || desired.getPhase() == Phase.Invalid) {
      desired.setFiredTime(null);
      desired.setJobName(null);
      Conditions.remove(desired, Condition.FIRED);
      Conditions.remove(desired, Condition.COMPLETE);
      Conditions.remove(desired, Condition.FAILED);
    }
    desired.setDueTime(dueTime);
    desired.setMessage(null);
  }

  /**
   * The Job's Complete / Failed condition moves a Running task to Succeeded / Failed; a Job that is
   * gone moves it to Failed, so a task never stays Running without a Job.
   */
  private static void applyJobOutcome(DelayedTask task, DelayedTaskStatus desired, Context<DelayedTask> context,
      Instant now, Long generation) {
    String jobName = desired.getJobName();
    if (jobName == null) {
      return;
    }
    Optional<Job> job = context.getSecondaryResources(Job.class).stream()
        .filter(j -> Objects.equals(j.getMetadata().getName(), jobName))
        .findFirst();
    if (job.isEmpty()) {
      // Not in the Job informer's cache. That alone does not prove it is gone: the Jobs and the
      // DelayedTasks come through two separate watches, and the reconcile caused by the firer's
      // Running write can run before the Job's own ADDED event has reached the Job cache. So a miss
      // is confirmed with a live GET by the Job's (deterministic) name. It costs a request only in
      // that short race and when the Job really is gone (deleted by hand, or by its own
      // ttlSecondsAfterFinished while the operator was away, which the first reconcile after a
      // start sees). A Job of that name that this task does not control is not its Job either.
      job = Optional.ofNullable(context.getClient().batch().v1().jobs()
              .inNamespace(task.getMetadata().getNamespace()).withName(jobName).get())
          .filter(live -> JobFactory.isControlledBy(live, task));
      if (job.isEmpty()) {
        String message = "Job " + jobName + " was deleted before its outcome was recorded; change spec.runAt or "
            + "spec.delay to run it again";
        desired.setPhase(Phase.Failed);
        desired.setMessage(message);
        Conditions.set(desired, Condition.FAILED, true, "JobGone", message, now, generation);
        return;
      }
    }
    if (job.get().getStatus() == null || job.get().getStatus().getConditions() == null) {
      return;
    }
    for (JobCondition condition : job.get().getStatus().getConditions()) {
      if (!"True".equals(condition.getStatus())) {
        continue;
      }
      if ("Complete".equals(condition.getType())) {
        desired.setPhase(Phase.Succeeded);
        desired.setMessage(null);
        Conditions.set(desired, Condition.COMPLETE, true, "JobComplete", "Job " + jobName + " completed", now,
            generation);
        return;
      }
      if ("Failed".equals(condition.getType())) {
        String why = condition.getMessage() != null ? condition.getMessage()
            : condition.getReason() != null ? condition.getReason() : "no reason given";
        String message = "Job " + jobName + " failed: " + why;
        desired.setPhase(Phase.Failed);
        desired.setMessage(message);
        Conditions.set(desired, Condition.FAILED, true, "JobFailed", message, now, generation);
        return;
      }
    }
  }

  /** Time left before a finished task is deleted; empty when no TTL applies to it. */
  private Optional<Duration> remainingTtl(DelayedTask task, DelayedTaskStatus status, Instant now) {
    Long ttl = finishedTtl.secondsFor(task).orElse(null);
    if (ttl == null) {
      return Optional.empty();
    }
    Instant finished = Conditions.lastTransition(status)
        .or(() -> Optional.ofNullable(Times.parseOrNull(status.getFiredTime())))
        .orElse(now);
    Instant deleteAt = finished.plusSeconds(ttl);
    return Optional.of(Duration.between(now, deleteAt));
  }

  private UpdateControl<DelayedTask> deleteExpired(DelayedTask task, Context<DelayedTask> context) {
    LOG.info("ttlSecondsAfterFinished={} has passed; deleting the task", finishedTtl.secondsFor(task).orElse(null));
    context.getClient().resource(task).delete();
    return UpdateControl.noUpdate();
  }

  /** Once per task: the first status that says it is kept (Ready's message did not say so before). */
  private void recordKept(DelayedTask task, DelayedTaskStatus current, GitOpsOwner owner) {
    boolean saidBefore = Conditions.find(current, Condition.READY)
        .map(Condition::getMessage)
        .filter(m -> m != null && m.contains(owner.keptMessage()))
        .isPresent();
    if (!saidBefore) {
      events.normal(task, TaskEvents.TTL_SKIPPED, "ttlSecondsAfterFinished=" + finishedTtl.secondsFor(task).orElse(null)
          + " has passed, but the task is " + owner.keptMessage());
    }
  }

  private void recordTransition(DelayedTask task, DelayedTaskStatus current, DelayedTaskStatus desired) {
    Phase before = current == null ? null : current.getPhase();
    Phase after = desired.getPhase();
    boolean newDue = current == null || !Objects.equals(current.getDueTime(), desired.getDueTime());
    if (before == after && !(after == Phase.Scheduled && newDue)
        && !(after == Phase.Invalid && !Objects.equals(current.getMessage(), desired.getMessage()))) {
      return;
    }
    switch (after) {
      case Scheduled -> events.normal(task, TaskEvents.SCHEDULED, "Scheduled to fire at " + desired.getDueTime());
      case Suspended -> events.normal(task, TaskEvents.SUSPENDED, "Suspended; it will not fire until spec.suspend is false");
      case Invalid -> events.warning(task, TaskEvents.INVALID, desired.getMessage());
      case Succeeded -> events.normal(task, TaskEvents.SUCCEEDED, "Job " + desired.getJobName() + " completed");
      case Failed -> events.warning(task, TaskEvents.FAILED, desired.getMessage());
      default -> {
        // Running, Fired and Missed are recorded by the firer, which causes them.
      }
    }
  }

  @Override
  public DeleteControl cleanup(DelayedTask task, Context<DelayedTask> context) {
    if (cancel(ScheduleIds.idOf(task))) {
      return DeleteControl.defaultDelete();
    }
    // Redis is down: keep the finalizer and try again, rather than leave an entry behind for a task
    // that is gone (the firer would skip it, but the schedule should not keep what no task backs).
    return DeleteControl.noFinalizerRemoval().rescheduleAfter(REDIS_RETRY.toMillis());
  }

  private boolean schedule(String id, Instant due) {
    try {
      schedule.schedule(id, due);
      return true;
    } catch (ScheduleUnavailableException e) {
      LOG.debug("Redis unavailable, schedule entry {} not written yet: {}", id, e.getMessage());
      return false;
    }
  }

  private boolean cancel(String id) {
    try {
      schedule.cancel(id);
      return true;
    } catch (ScheduleUnavailableException e) {
      LOG.debug("Redis unavailable, schedule entry {} not removed yet: {}", id, e.getMessage());
      return false;
    }
  }
}
