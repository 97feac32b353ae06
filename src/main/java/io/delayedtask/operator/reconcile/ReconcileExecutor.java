package io.delayedtask.operator.reconcile;

import io.delayedtask.operator.reconcile.QueuedReconcile.Lane;
import io.javaoperatorsdk.operator.processing.event.ResourceID;
import java.time.Duration;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ThreadFactory;
import java.util.concurrent.ThreadPoolExecutor;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.function.Predicate;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;
import org.slf4j.MDC;

/**
 * JOSDK's reconcile threads, taking waiting reconciles from three lanes ({@link ReconcileLanes}):
 * the reconcile of a task whose schedule entry the leader has claimed (its due time has come) goes
 * first; the reconcile that records a delivery's answer (or its failure) takes namespaces in turn,
 * at most {@link ReconcileLanes#OUTCOMES_AT_ONCE} at once; every other reconcile waits in arrival
 * order. So a flood of other work (thousands of tasks created at once, an operator starting on a
 * cluster full of them) does not make a due task wait behind it, and the rest is not starved
 * either: after {@link ReconcileLanes#CLAIMS_IN_A_ROW} claimed reconciles in a row, one waiting in
 * another lane goes next.
 *
 * <p>Why outcomes have a lane of their own: they come in bursts. Attempts sent together time out
 * together (hundreds of a tenant's tasks due at once to a receiver that never answers, every {@code
 * delivery.timeout}), and each outcome is a status write and an Event. Run on every thread at once,
 * such a burst takes the CPU from the due tasks of every other namespace (measured in
 * docs/performance.md). A few at a time, the burst is recorded a little later and the due tasks
 * keep their CPU; nothing waits for an outcome's record but its own task's next step.
 *
 * <p>Which task a reconcile is for is read from JOSDK's logging context: JOSDK puts the resource's
 * name and namespace into the MDC ({@code resource.name}, {@code resource.namespace}, documented
 * and on by default, {@code JAVA_OPERATOR_SDK_USE_MDC}) while it submits the reconcile, on the
 * submitting thread. A reconcile submitted without it (MDC turned off) waits in arrival order, said
 * once in the log. A reconcile already waiting when its task's claim arrives moves to the claimed
 * lane ({@link #promote}). Deciding the lane is a map lookup: JOSDK submits while holding its event
 * processor's lock.
 */
public final class ReconcileExecutor extends ThreadPoolExecutor {
  private static final Logger LOG = LoggerFactory.getLogger(ReconcileExecutor.class);

  /** JOSDK's MDC keys (MDCUtils) for the resource a reconcile is submitted for. */
  static final String MDC_NAME = "resource.name";

  static final String MDC_NAMESPACE = "resource.namespace";

  private final Predicate<ResourceID> holdsClaim;
  private final Predicate<ResourceID> awaitsOutcomeRecord;
  private final Map<ResourceID, QueuedReconcile> waiting = new ConcurrentHashMap<>();
  private final AtomicBoolean unknownReported = new AtomicBoolean();

  /**
   * {@code holdsClaim}: whether a claim of that task waits for its reconcile; {@code
   * awaitsOutcomeRecord}: whether a delivery's outcome for that task waits to be recorded.
   */
  public ReconcileExecutor(
      int threads, Predicate<ResourceID> holdsClaim, Predicate<ResourceID> awaitsOutcomeRecord) {
    super(threads, threads, 0, TimeUnit.MILLISECONDS, new ReconcileLanes(), threadsNamed());
    this.holdsClaim = holdsClaim;
    this.awaitsOutcomeRecord = awaitsOutcomeRecord;
    // Every reconcile goes through the lanes: a pool still growing would run a submission on a
    // new thread at once, whatever its lane.
    prestartAllCoreThreads();
  }

  /**
   * Holds the outcome and other lanes (claimed reconciles still run) until {@code scheduleReady}
   * completes, or {@code atMost} has passed. A new leader's first resync then writes the missing
   * entries without sharing the machine with the first reconciles of every task the informer has
   * just listed (all of them at once when an operator starts on a full cluster), so the schedule,
   * and the firing of what is due, come first. Bounded, so a resync that cannot run (Redis down)
   * holds nothing up for long; the resync's slow part (GETs of entries whose task is gone) comes
   * after the release.
   */
  public void holdOthersUntil(CompletableFuture<?> scheduleReady, Duration atMost) {
    lanes().holdOthers(true);
    scheduleReady
        .copy()
        .completeOnTimeout(null, atMost.toMillis(), TimeUnit.MILLISECONDS)
        .whenComplete((done, error) -> lanes().holdOthers(false));
  }

  @Override
  public void execute(Runnable reconcile) {
    ResourceID task = submittedFor();
    QueuedReconcile queued = new QueuedReconcile(reconcile, task, laneOf(task));
    if (task != null) {
      waiting.put(task, queued);
    } else if (unknownReported.compareAndSet(false, true)) {
      LOG.warn(
          "JOSDK submitted a reconcile without naming its resource in the MDC ({} turned off?): reconciles "
              + "run in arrival order, and a due task may wait behind others",
          "JAVA_OPERATOR_SDK_USE_MDC");
    }
    super.execute(queued);
  }

  private Lane laneOf(ResourceID task) {
    if (task == null) {
      return Lane.OTHER;
    }
    return holdsClaim.test(task)
        ? Lane.CLAIMED
        : awaitsOutcomeRecord.test(task) ? Lane.OUTCOME : Lane.OTHER;
  }

  @Override
  protected void beforeExecute(Thread thread, Runnable runnable) {
    QueuedReconcile started = (QueuedReconcile) runnable;
    if (started.task != null) {
      waiting.remove(started.task, started);
    }
    super.beforeExecute(thread, runnable);
  }

  @Override
  protected void afterExecute(Runnable runnable, Throwable error) {
    super.afterExecute(runnable, error);
    if (runnable instanceof QueuedReconcile ended) {
      lanes().ended(ended);
    }
  }

  /**
   * The task's claim arrived: if its reconcile waits for a thread, it moves to the claimed lane.
   */
  public void promote(ResourceID task) {
    QueuedReconcile queued = waiting.get(task);
    if (queued != null) {
      lanes().promote(queued);
    }
  }

  private ReconcileLanes lanes() {
    return (ReconcileLanes) getQueue();
  }

  private static ResourceID submittedFor() {
    String name = MDC.get(MDC_NAME);
    return name == null ? null : new ResourceID(name, MDC.get(MDC_NAMESPACE));
  }

  private static ThreadFactory threadsNamed() {
    AtomicInteger counter = new AtomicInteger();
    return runnable -> new Thread(runnable, "reconciler-" + counter.incrementAndGet());
  }
}
