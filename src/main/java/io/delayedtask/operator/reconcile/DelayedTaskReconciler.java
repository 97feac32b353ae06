package io.delayedtask.operator.reconcile;

import io.delayedtask.operator.api.v1alpha1.DelayedTask;
import io.delayedtask.operator.api.v1alpha1.DelayedTaskStatus;
import io.delayedtask.operator.api.v1alpha1.Phase;
import io.delayedtask.operator.decision.ClaimOutcome;
import io.delayedtask.operator.decision.ClaimVerdict;
import io.delayedtask.operator.decision.ScheduleChange;
import io.delayedtask.operator.decision.TaskEvent;
import io.delayedtask.operator.leader.DueClaims;
import io.delayedtask.operator.leader.ScheduleIds;
import io.delayedtask.operator.leader.TaskQueues;
import io.delayedtask.operator.reconcile.TaskDecider.JobCheck;
import io.delayedtask.operator.reconcile.TaskDecider.JobCreation;
import io.delayedtask.operator.schedule.ClaimedEntry;
import io.delayedtask.operator.schedule.Disposition;
import io.delayedtask.operator.schedule.QueueRef;
import io.delayedtask.operator.schedule.ScheduleUnavailableException;
import io.delayedtask.operator.sink.DeliveryOutcome;
import io.delayedtask.operator.sink.DeliveryOutcomes;
import io.delayedtask.operator.sink.DeliveryStarter;
import io.delayedtask.operator.task.cache.CachedObjects;
import io.delayedtask.operator.task.cache.LeanItemStore;
import io.delayedtask.operator.task.job.ApiErrors;
import io.delayedtask.operator.task.job.JobFactory;
import io.delayedtask.operator.task.job.TaskLabels;
import io.delayedtask.operator.task.job.TaskTrace;
import io.delayedtask.operator.task.time.Times;
import io.fabric8.kubernetes.api.model.batch.v1.Job;
import io.fabric8.kubernetes.client.KubernetesClientException;
import io.javaoperatorsdk.operator.api.config.informer.InformerEventSourceConfiguration;
import io.javaoperatorsdk.operator.api.reconciler.Context;
import io.javaoperatorsdk.operator.api.reconciler.EventSourceContext;
import io.javaoperatorsdk.operator.api.reconciler.PrimaryUpdateAndCacheUtils;
import io.javaoperatorsdk.operator.api.reconciler.Reconciler;
import io.javaoperatorsdk.operator.api.reconciler.UpdateControl;
import io.javaoperatorsdk.operator.processing.event.ResourceID;
import io.javaoperatorsdk.operator.processing.event.source.EventSource;
import io.javaoperatorsdk.operator.processing.event.source.informer.InformerEventSource;
import java.time.Duration;
import java.time.Instant;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.Optional;
import java.util.Set;
import java.util.concurrent.Semaphore;
import java.util.stream.Collectors;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The one writer of a DelayedTask's status, and the one place a task fires. JOSDK calls it, one
 * call at a time per task, for every change of the task's spec, of one of its Jobs, and for every
 * schedule claim the leader's poller hands over ({@link DueClaims}). Each call gathers the facts
 * from JOSDK's caches, lets {@link TaskDecider} decide, and carries the plan out: the Redis entry,
 * the Job, the status (with the resourceVersion it decided from), the Events, the claim, and the
 * finalizer.
 *
 * <p>No request reads the task: its status writes go into JOSDK's cache overlay, so the next call
 * sees them; a 409 is the one reason to read it again, and then the decision is made anew.
 *
 * <p>No finalizer (docs/reference.md): a delete never waits for the operator, so a stopped or
 * uninstalled operator leaves no task or namespace stuck terminating. JOSDK's "trigger on all
 * events" mode still reconciles the delete event, which removes the entry; an entry whose task went
 * while no operator ran is dropped when it is claimed or at the next resync. The finalizer that
 * earlier versions put on tasks is taken off at a task's next reconcile.
 *
 * <p>A sink task's delivery is sent without waiting ({@link DeliveryStarter}); its outcome comes
 * back through {@link DeliveryOutcomes} as an event, and the reconcile it causes records it.
 *
 * <p>Besides the decider it has four ports, each named for what a reconcile asks of it: what it
 * reads about the task's world ({@link TaskWorld}), where it changes the schedule ({@link
 * ScheduleSide}), where it records what it did ({@link Recording}), and how it delivers to a sink
 * ({@link SinkDelivery}).
 */
public class DelayedTaskReconciler implements Reconciler<DelayedTask> {
  /**
   * The finalizer earlier versions put on every task ({@code <plural>.<group>/finalizer}); taken
   * off.
   */
  public static final String LEGACY_FINALIZER = "delayedtasks." + DelayedTask.GROUP + "/finalizer";

  /** How soon a TTL deletion refused by its precondition (the task changed) is decided again. */
  static final Duration TTL_RETRY = Duration.ofSeconds(1);

  /** Decisions per call: the first, and one more after each conflict. */
  private static final int MAX_DECISIONS = 3;

  /** Large tasks (CachedObjects) reconciled at once, each read whole from the API server. */
  private static final int LARGE_TASKS_AT_ONCE = 4;

  private static final Logger LOG = LoggerFactory.getLogger(DelayedTaskReconciler.class);

  private final TaskDecider decider;
  private final TaskWorld world;
  private final ScheduleSide schedule;
  private final Recording records;
  private final SinkDelivery delivery;
  private final StatusWriter statusWriter = new StatusWriter();
  private final TaskJobs taskJobs = new TaskJobs();
  private final Semaphore largeTasks = new Semaphore(LARGE_TASKS_AT_ONCE);
  private volatile InformerEventSource<Job, DelayedTask> jobs;

  /**
   * @param decider decides each reconcile's plan from the facts (a plain function)
   * @param world what a decision reads beyond JOSDK's context: time, leadership, admission, queues
   * @param schedule the task's Redis entry and its claim
   * @param records where what was done is recorded: Events, metrics, the firing's span
   * @param delivery how a sink task's attempt is sent, and its answer comes back
   */
  public DelayedTaskReconciler(
      TaskDecider decider,
      TaskWorld world,
      ScheduleSide schedule,
      Recording records,
      SinkDelivery delivery) {
    this.decider = decider;
    this.world = world;
    this.schedule = schedule;
    this.records = records;
    this.delivery = delivery;
  }

  @Override
  public List<EventSource<?, DelayedTask>> prepareEventSources(
      EventSourceContext<DelayedTask> context) {
    world.tasks().attach(context.getPrimaryCache());
    // Only the Jobs we created (they carry the task-uid label), mapped to their controlling task;
    // kept without managedFields when the tasks are (one informer, see DelayedTaskOperator).
    var config =
        InformerEventSourceConfiguration.from(Job.class, DelayedTask.class)
            .withLabelSelector(TaskLabels.TASK_UID)
            .withNamespacesInheritedFromController()
            .withSecondaryToPrimaryMapper(DelayedTaskReconciler::owningTask);
    if (context.getControllerConfiguration().getInformerConfig().getItemStore()
        instanceof LeanItemStore) {
      config.withItemStore(LeanItemStore.forJobs());
    }
    jobs =
        new InformerEventSource<>(config.build(), context) {
          @Override
          public void onDelete(Job job, boolean deletedFinalStateUnknown) {
            if (!deletedFinalStateUnknown) {
              taskJobs.deleted(job); // its outcome, should the task's reconcile come after this
            }
            super.onDelete(job, deletedFinalStateUnknown);
          }
        };
    return List.of(jobs, schedule.claims(), delivery.outcomes(), world.queueHolds());
  }

  static Set<ResourceID> owningTask(Job job) {
    if (job.getMetadata().getOwnerReferences() == null) {
      return Set.of();
    }
    return job.getMetadata().getOwnerReferences().stream()
        .filter(
            ref -> Boolean.TRUE.equals(ref.getController()) && "DelayedTask".equals(ref.getKind()))
        .map(ref -> new ResourceID(ref.getName(), job.getMetadata().getNamespace()))
        .collect(Collectors.toSet());
  }

  @Override
  public UpdateControl<DelayedTask> reconcile(DelayedTask task, Context<DelayedTask> context) {
    Optional<ClaimedEntry> claim = context.getSecondaryResource(ClaimedEntry.class);
    if (!world.leads()) {
      claim.ifPresent(entry -> schedule.claims().settle(entry, Disposition.retryAt(entry.due())));
      // Handed back without a dispatch: its queue's slot is free for the next leader's claim.
      claim.flatMap(ClaimedEntry::queue).ifPresent(queue -> freeSlot(queue, task));
      return UpdateControl.noUpdate();
    }
    if (context.isPrimaryResourceDeleted() || task.isMarkedForDeletion()) {
      return whileDeleting(task, claim, context);
    }
    removeLegacyFinalizer(task, context);
    try {
      return reconcileAsLeader(task, claim, context);
    } catch (RuntimeException e) {
      // One retry policy for a firing: a claim not settled yet goes back with the schedule's
      // backoff (Redis clock), and its next claim reconciles the task again; JOSDK's own retry
      // would be a second one on top. Without a claim (a spec change, a Job's outcome, a delivery's
      // answer) JOSDK retries the reconcile.
      Optional<ClaimedEntry> waiting = claim.filter(schedule.claims()::isWaiting);
      if (waiting.isEmpty()) {
        throw e;
      }
      records.metrics().outcome(ClaimOutcome.RETRY);
      LOG.warn("Firing failed; the claim goes back with backoff: {}", ApiErrors.reason(e));
      schedule.claims().retryLater(waiting.get(), "reconciling failed: " + ApiErrors.reason(e));
      return UpdateControl.noUpdate();
    }
  }

  private UpdateControl<DelayedTask> reconcileAsLeader(
      DelayedTask cached, Optional<ClaimedEntry> claim, Context<DelayedTask> context) {
    if (claim.isPresent() && claim.get().queue().isPresent()) {
      world.queueHolds().forget(ResourceID.fromResource(cached));
      if (!claim.get().queue().equals(TaskQueues.placement(cached))) {
        // Left in a queue the task no longer names (spec.queue changed): not this queue's to fire.
        settle(claim.get(), ClaimVerdict.Settle.stale());
        freeSlot(claim.get().queue().get(), cached);
        return UpdateControl.noUpdate();
      }
    }
    if (!CachedObjects.isTrimmed(cached)) {
      return decideAndAct(cached, claim, context);
    }
    // A large task is cached without its payload, data and jobTemplate: decide from all of it, read
    // here. A few at a time: a restart or a burst of large tasks never holds dozens of whole copies
    // (up to a megabyte each, parsed) in memory at once.
    largeTasks.acquireUninterruptibly();
    try {
      Optional<DelayedTask> whole = reread(cached, context);
      if (whole.isEmpty()) {
        claim.ifPresent(entry -> settle(entry, ClaimVerdict.Settle.stale()));
        return UpdateControl.noUpdate();
      }
      return decideAndAct(whole.get(), claim, context);
    } finally {
      largeTasks.release();
    }
  }

  private UpdateControl<DelayedTask> decideAndAct(
      DelayedTask read, Optional<ClaimedEntry> claim, Context<DelayedTask> context) {
    DelayedTask task = read;
    // Kept across a conflict's decisions: one dry run per generation.
    Optional<JobCheck> checked = Optional.empty();
    Long checkedGeneration = null;
    for (int decision = 1; ; decision++) {
      TaskFacts facts = facts(task, claim, context);
      Plan plan = decider.decide(facts);
      if (plan.jobToCheck().isPresent()) {
        Long generation = task.getMetadata().getGeneration();
        Optional<JobCheck> known = checked;
        JobCheck check =
            known.isPresent() && generation != null && generation.equals(checkedGeneration)
                ? known.get()
                : checkJob(task, plan.jobToCheck().get(), context);
        checked = Optional.of(check);
        checkedGeneration = generation;
        facts = facts.withJobCheck(check);
        plan = decider.decide(facts);
      }
      changeSchedule(task, plan.schedule());
      if (plan.jobToCreate().isPresent()) {
        facts = facts.withJobCreation(createJob(task, plan.jobToCreate().get(), context));
        plan = decider.decide(facts);
      }
      DelayedTaskStatus before =
          task.getStatus(); // the write sets the task's status to the one written
      StatusWriter.Result written = writeStatus(task, plan.status(), context);
      if (written == StatusWriter.Result.GONE) {
        claim.ifPresent(entry -> settle(entry, ClaimVerdict.Settle.stale()));
        return UpdateControl.noUpdate();
      }
      if (written == StatusWriter.Result.CONFLICT) {
        // The task changed since the cache's copy: decide again from the API server's.
        Optional<DelayedTask> fresh =
            decision < MAX_DECISIONS ? reread(task, context) : Optional.empty();
        if (fresh.isPresent()) {
          task = fresh.get();
          continue;
        }
        claim.ifPresent(
            entry ->
                settle(
                    entry,
                    new ClaimVerdict.Backoff(
                        "the task kept changing while it was " + "being fired")));
        return UpdateControl.noUpdate(); // the newer version's own event reconciles it again
      }
      facts.delivery().ifPresent(outcome -> delivery.outcomes().recorded(read, outcome));
      if (plan.status().getJobName() != null
          && plan.status().getPhase() != null
          && plan.status().getPhase().isFinished()) {
        taskJobs.outcomeRecorded(task.getMetadata().getNamespace(), plan.status().getJobName());
      }
      plan.deliveryMetric().ifPresent(records.metrics()::delivery);
      for (TaskEvent event : plan.events()) {
        records.event(task, event);
      }
      firingRecorded(task, before, plan.status());
      if (plan.delivery().isPresent()) {
        // After the status write: a conflict above decides again, and must not have sent already.
        delivery
            .starter()
            .start(
                task,
                Times.parseOrNull(plan.status().getDueTime()),
                claim.orElseThrow(),
                plan.delivery().get());
      }
      plan.claim().ifPresent(verdict -> settle(claim.orElseThrow(), verdict));
      freeQueueSlot(task, before, claim, plan, facts);
      if (plan.deleteTask()) {
        return deleteAfterTtl(task, context);
      }
      // A task whose admission could not be judged yet (the policy missing, or the list after its
      // return not made yet) is looked at again, so its record is written before it is due.
      boolean unjudged =
          facts.admissionPolicyMissing().isPresent()
              && AdmissionPolicies.needsPolicy(task)
              && (plan.status().getPhase() == null || !plan.status().getPhase().isFinished());
      Optional<Duration> again =
          plan.requeue().isPresent() || !unjudged
              ? plan.requeue()
              : Optional.of(TaskDecider.ADMISSION_POLICY_RECHECK);
      return again
          .map(after -> UpdateControl.<DelayedTask>noUpdate().rescheduleAfter(after))
          .orElseGet(UpdateControl::noUpdate);
    }
  }

  /**
   * A queued task's dispatch has ended, or its claim dispatched nothing: its queue's concurrency
   * slot is free. A dispatch lasts from the claim until the delivery attempt's answer is recorded,
   * or until the Job it created finishes (its Complete or Failed condition, or its deletion,
   * recorded from the Job events the operator watches anyway); a status-only firing ends at once.
   */
  private void freeQueueSlot(
      DelayedTask task,
      DelayedTaskStatus before,
      Optional<ClaimedEntry> claim,
      Plan plan,
      TaskFacts facts) {
    Optional<QueueRef> named = TaskQueues.named(task);
    if (named.isEmpty()) {
      return;
    }
    DelayedTaskStatus after = plan.status();
    boolean jobRuns = after.getPhase() == Phase.Running && after.getJobName() != null;
    boolean claimEnded =
        claim.filter(entry -> entry.queue().isPresent()).isPresent()
            && plan.claim().isPresent()
            && plan.delivery().isEmpty()
            && !jobRuns
            && !facts.deliveryInFlight();
    boolean answered = facts.delivery().isPresent() && plan.deliveryMetric().isPresent();
    boolean jobEnded =
        before != null
            && before.getPhase() == Phase.Running
            && before.getJobName() != null
            && !jobRuns;
    if (claimEnded || answered || jobEnded) {
      freeSlot(named.get(), task);
    }
  }

  private void freeSlot(QueueRef queue, DelayedTask task) {
    try {
      schedule.entries().freeSlots(queue, List.of(ScheduleIds.idOf(task)));
    } catch (ScheduleUnavailableException e) {
      LOG.debug(
          "Redis unavailable, the queue slot of {} is freed by the resync: {}",
          ScheduleIds.idOf(task),
          e.getMessage());
      schedule.fellBehind();
    }
  }

  /**
   * The facts a decision reads, all from JOSDK's caches (for one exception see {@link TaskJobs}).
   */
  private TaskFacts facts(
      DelayedTask task, Optional<ClaimedEntry> claim, Context<DelayedTask> context) {
    String namespace = task.getMetadata().getNamespace();
    Map<String, Job> owned =
        taskJobs.of(
            task,
            context.getSecondaryResources(Job.class),
            name ->
                context
                    .getClient()
                    .batch()
                    .v1()
                    .jobs()
                    .inNamespace(namespace)
                    .withName(name)
                    .get());
    ResourceID id = ResourceID.fromResource(task);
    return new TaskFacts(
            task,
            owned,
            claim,
            world.now(),
            context.getSecondaryResource(DeliveryOutcome.class),
            delivery.outcomes().inFlight(id),
            Optional.empty())
        .withAdmission(world.admission().judge(task))
        .withQueueHold(world.queueHolds().of(task));
  }

  private Optional<DelayedTask> reread(DelayedTask task, Context<DelayedTask> context) {
    DelayedTask fresh =
        context
            .getClient()
            .resources(DelayedTask.class)
            .inNamespace(task.getMetadata().getNamespace())
            .withName(task.getMetadata().getName())
            .get();
    return Optional.ofNullable(fresh)
        .filter(t -> Objects.equals(t.getMetadata().getUid(), task.getMetadata().getUid()));
  }

  /**
   * A failed Redis write is not retried here: the entry is an index of the task, and the resync
   * rebuilds it from the tasks as soon as Redis answers again.
   */
  private void changeSchedule(DelayedTask task, ScheduleChange change) {
    String id = ScheduleIds.idOf(task);
    try {
      if (change instanceof ScheduleChange.Write write) {
        schedule
            .entries()
            .schedule(id, write.due(), TaskQueues.placement(task), TaskQueues.named(task));
      } else if (change instanceof ScheduleChange.Remove) {
        schedule.entries().cancel(id, TaskQueues.named(task));
      }
    } catch (ScheduleUnavailableException e) {
      LOG.debug(
          "Redis unavailable, schedule entry {} not changed yet ({}); the resync repairs it: {}",
          id,
          change.getClass().getSimpleName(),
          e.getMessage());
      schedule.fellBehind();
    }
  }

  /**
   * A dry run of the creation of the task's Job ({@code dryRun=All}): the API server validates it
   * and runs its admission (webhooks and policies included) as for the real creation, and stores
   * nothing. The same RBAC as the creation ({@code create jobs}).
   */
  private JobCheck checkJob(DelayedTask task, Job wanted, Context<DelayedTask> context) {
    try {
      context
          .getClient()
          .batch()
          .v1()
          .jobs()
          .inNamespace(task.getMetadata().getNamespace())
          .resource(wanted)
          .dryRun()
          .create();
      return new JobCheck.Accepted();
    } catch (KubernetesClientException e) {
      if (e.getCode() == 409) {
        return new JobCheck
            .Accepted(); // a Job of that name exists: the template passed validation before that
      }
      if (ApiErrors.isTransient(e)) {
        LOG.info(
            "The dry run of the task's Job got no verdict ({}); scheduled all the same, the creation at the due "
                + "time decides",
            ApiErrors.reason(e));
        return new JobCheck.Unanswered(ApiErrors.reason(e));
      }
      return new JobCheck.Refused(ApiErrors.jobTemplateReason(e));
    }
  }

  private JobCreation createJob(DelayedTask task, Job wanted, Context<DelayedTask> context) {
    String namespace = task.getMetadata().getNamespace();
    String jobName = wanted.getMetadata().getName();
    try {
      Job created =
          context.getClient().batch().v1().jobs().inNamespace(namespace).resource(wanted).create();
      // Into the Job cache at once: the next reconcile of this task must see its Job, and a retry
      // after a lost status write must find it rather than create it again.
      jobs.handleRecentResourceCreate(ResourceID.fromResource(created), created);
      return new JobCreation.Created(created);
    } catch (KubernetesClientException e) {
      if (e.getCode() == 409) {
        // AlreadyExists (or a conflict): look at what is there.
        Job existing =
            context.getClient().batch().v1().jobs().inNamespace(namespace).withName(jobName).get();
        if (existing != null) {
          return JobFactory.isControlledBy(existing, task)
              ? new JobCreation.AlreadyOurs(existing)
              : new JobCreation.Foreign(jobName);
        }
      }
      return ApiErrors.isTransient(e)
          ? new JobCreation.Transient(jobName, ApiErrors.reason(e))
          : new JobCreation.Refused(jobName, ApiErrors.reason(e));
    }
  }

  /**
   * An Invalid task is reported on itself even when its status cannot be written (the API server
   * refuses it): then at least as an Event (one, counted, however often this is retried).
   */
  private StatusWriter.Result writeStatus(
      DelayedTask task, DelayedTaskStatus desired, Context<DelayedTask> context) {
    try {
      return statusWriter.write(task, desired, context);
    } catch (KubernetesClientException e) {
      if (desired.getPhase() == Phase.Invalid) {
        records.event(
            task,
            TaskEvent.warning(
                TaskEvents.INVALID,
                desired.getMessage()
                    + " (the status could not be "
                    + "written: "
                    + ApiErrors.reason(e)
                    + ")"));
      }
      throw e;
    }
  }

  /**
   * When this status write recorded a firing (its firedTime, or Missed, new for its due time): the
   * firing's span, and the one Warning Event for a {@code delayedtask.io/traceparent} that is not
   * valid.
   */
  private void firingRecorded(
      DelayedTask task, DelayedTaskStatus before, DelayedTaskStatus written) {
    Instant due = Times.parseOrNull(written.getDueTime());
    if (due == null || !firing(before, written)) {
      return;
    }
    TaskTrace trace = TaskTrace.of(task, due);
    trace
        .invalidAnnotation()
        .ifPresent(
            value ->
                records
                    .events()
                    .warning(
                        task,
                        INVALID_TRACEPARENT,
                        "annotation "
                            + TaskTrace.TRACEPARENT_ANNOTATION
                            + " is not a W3C traceparent ("
                            + shown(value)
                            + "; expected "
                            + "00-<32 hex digits trace id>-<16 hex digits parent id>-<2 hex digits flags>): ignored, this firing has "
                            + "a trace of its own, "
                            + trace.firing().getTraceId()
                            + "; fix or remove the annotation"));
    Instant now = world.now();
    Instant firedAt = Optional.ofNullable(Times.parseOrNull(written.getFiredTime())).orElse(now);
    String kind =
        task.getSpec().getJobTemplate() != null
            ? "job"
            : task.getSpec().getSink() != null ? "sink" : "status";
    records
        .tracing()
        .fired(
            trace,
            task.getMetadata().getNamespace(),
            task.getMetadata().getName(),
            task.getMetadata().getUid(),
            due,
            Duration.between(due, firedAt),
            kind,
            written.getPhase().name().toLowerCase(java.util.Locale.ROOT),
            now);
  }

  static final String INVALID_TRACEPARENT = "InvalidTraceparent";

  /** True when {@code written} records the firing of its due time and {@code before} did not. */
  static boolean firing(DelayedTaskStatus before, DelayedTaskStatus written) {
    if (written.getPhase() == null) {
      return false;
    }
    boolean sameDue = before != null && Objects.equals(before.getDueTime(), written.getDueTime());
    if (written.getPhase() == Phase.Missed) {
      return !(sameDue && before.getPhase() == Phase.Missed);
    }
    return written.getFiredTime() != null
        && !(sameDue && Objects.equals(before.getFiredTime(), written.getFiredTime()));
  }

  /** An annotation's value in a message: quoted, at most 80 characters. */
  private static String shown(String value) {
    return "\"" + (value.length() > 80 ? value.substring(0, 80) + "..." : value) + "\"";
  }

  private void settle(ClaimedEntry claim, ClaimVerdict verdict) {
    if (verdict instanceof ClaimVerdict.Settle settle) {
      settle.lag().ifPresent(records.metrics()::lag);
      records.metrics().outcome(settle.outcome());
      schedule.claims().settle(claim, Disposition.acknowledge());
    } else if (verdict instanceof ClaimVerdict.HandBack handBack) {
      handBack.outcome().ifPresent(records.metrics()::outcome);
      if (handBack.outcome().filter(ClaimOutcome.CLOCK_SKEW::equals).isPresent()) {
        LOG.warn(
            "Redis's clock says the task is due, this process's clock does not yet: the clocks disagree "
                + "(check NTP on the Redis and operator hosts); firing when both say it is due, at {} by Redis's clock",
            handBack.at());
      }
      schedule.claims().settle(claim, Disposition.retryAt(handBack.at()));
    } else if (verdict instanceof ClaimVerdict.Backoff backoff) {
      records.metrics().outcome(ClaimOutcome.RETRY);
      schedule.claims().retryLater(claim, backoff.why());
    }
  }

  /**
   * The TTL has passed: delete the task if it is still the object this decision was made from
   * ({@link TtlDeletion}); if it changed meanwhile, decide again.
   */
  private UpdateControl<DelayedTask> deleteAfterTtl(
      DelayedTask task, Context<DelayedTask> context) {
    DelayedTask current = context.getPrimaryCache().get(ResourceID.fromResource(task)).orElse(task);
    LOG.info("ttlSecondsAfterFinished has passed; deleting the task");
    if (TtlDeletion.delete(context.getClient(), current) == TtlDeletion.Result.CHANGED) {
      LOG.debug("The task changed since the TTL decision; deciding again");
      return UpdateControl.<DelayedTask>noUpdate().rescheduleAfter(TTL_RETRY);
    }
    return UpdateControl.noUpdate();
  }

  /**
   * Tasks of earlier versions carry a finalizer: one JSON patch takes it off, so a delete never
   * waits.
   */
  private static void removeLegacyFinalizer(DelayedTask task, Context<DelayedTask> context) {
    if (task.hasFinalizer(LEGACY_FINALIZER)) {
      PrimaryUpdateAndCacheUtils.removeFinalizer(context.getClient(), task, LEGACY_FINALIZER);
    }
  }

  /**
   * A task being deleted (or gone): its entry is removed, and its claim dropped. While Redis cannot
   * be reached the entry is left to the resync (a claim of it is dropped as stale when it comes). A
   * task of an earlier version that still carries the legacy finalizer loses it here.
   */
  private UpdateControl<DelayedTask> whileDeleting(
      DelayedTask task, Optional<ClaimedEntry> claim, Context<DelayedTask> context) {
    try {
      schedule.entries().cancel(ScheduleIds.idOf(task), TaskQueues.named(task));
    } catch (ScheduleUnavailableException e) {
      LOG.debug(
          "Redis unavailable, the deleted task's entry is left to the resync: {}", e.getMessage());
      schedule.fellBehind();
    }
    claim.ifPresent(entry -> settle(entry, ClaimVerdict.Settle.stale()));
    delivery.outcomes().forget(task);
    if (!context.isPrimaryResourceDeleted()) {
      removeLegacyFinalizer(task, context);
    }
    return UpdateControl.noUpdate();
  }
}
