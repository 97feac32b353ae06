package io.delayedtask.operator.leader;

import io.javaoperatorsdk.operator.processing.event.ResourceID;
import java.lang.reflect.Field;
import java.time.Instant;
import java.util.Comparator;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.PriorityBlockingQueue;
import java.util.concurrent.ThreadFactory;
import java.util.concurrent.ThreadPoolExecutor;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicLong;
import java.util.function.Function;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * JOSDK's reconcile threads, taking waiting reconciles earliest due time first (the real-time
 * scheduler's "earliest deadline first"), instead of JOSDK's first in, first out.
 *
 * <p>Why: firing shares the reconcile path with everything else (one writer per task), and a flood
 * of other reconciles (thousands of tasks created at once, or an operator starting on a cluster
 * full of them) must not make a task wait behind it: a task whose schedule entry the leader has
 * claimed (its due time has come) goes first, then tasks in the order they fall due, then the rest
 * (suspended, invalid, finished) as they came. A reconcile already waiting when its task's claim
 * arrives moves to the front ({@link #promote}).
 *
 * <p>JOSDK hands each reconcile over as a runnable of its own class, which names the task in a
 * private field read here. Should a JOSDK version name it otherwise, the order falls back to first
 * in, first out, says so once in the log, and {@code EarliestDueFirstExecutorTest} fails first.
 */
public final class EarliestDueFirstExecutor extends ThreadPoolExecutor {
  private static final Logger LOG = LoggerFactory.getLogger(EarliestDueFirstExecutor.class);
  /** JOSDK 5's runnable per reconcile, and its field naming the resource. */
  static final String JOSDK_RUNNABLE = "io.javaoperatorsdk.operator.processing.event.EventProcessor$ReconcilerExecutor";
  static final String RESOURCE_FIELD = "resourceID";
  /** The key of a task whose due time has come (it holds a claim). */
  static final Instant NOW_DUE = Instant.MIN;
  private static final Comparator<Runnable> EARLIEST_DUE_FIRST = Comparator
      .comparing((Runnable r) -> ((Waiting) r).due)
      .thenComparingLong(r -> ((Waiting) r).sequence);

  private final Function<ResourceID, Instant> dueOf;
  private final Function<Runnable, ResourceID> resourceOf;
  private final Map<ResourceID, Waiting> waiting = new ConcurrentHashMap<>();
  private final AtomicLong sequence = new AtomicLong();

  /** A reconcile waiting for a thread, with the key it waits by. */
  private static final class Waiting implements Runnable {
    final Runnable reconcile;
    final ResourceID resource;
    final long sequence;
    volatile Instant due;

    Waiting(Runnable reconcile, ResourceID resource, long sequence, Instant due) {
      this.reconcile = reconcile;
      this.resource = resource;
      this.sequence = sequence;
      this.due = due;
    }

    @Override
    public void run() {
      reconcile.run();
    }
  }

  /**
   * {@code dueOf}: when a task falls due, {@link #NOW_DUE} if it holds a claim, {@link Instant#MAX}
   * if it waits for nothing. Reconciles are JOSDK's.
   */
  public EarliestDueFirstExecutor(int threads, Function<ResourceID, Instant> dueOf) {
    this(threads, dueOf, josdkResourceOf());
  }

  /** {@code resourceOf}: the task a reconcile runnable is for, or null when it cannot tell. */
  EarliestDueFirstExecutor(int threads, Function<ResourceID, Instant> dueOf, Function<Runnable, ResourceID> resourceOf) {
    super(threads, threads, 0, TimeUnit.MILLISECONDS, new PriorityBlockingQueue<>(64, EARLIEST_DUE_FIRST),
        threadsNamed());
    this.dueOf = dueOf;
    this.resourceOf = resourceOf;
  }

  @Override
  public void execute(Runnable reconcile) {
    ResourceID resource = resourceOf.apply(reconcile);
    Instant due = resource == null ? Instant.MAX : dueOf.apply(resource);
    Waiting entry = new Waiting(reconcile, resource, sequence.incrementAndGet(), due);
    if (resource != null) {
      waiting.put(resource, entry);
    }
    super.execute(entry);
  }

  @Override
  protected void beforeExecute(Thread thread, Runnable entry) {
    Waiting started = (Waiting) entry;
    if (started.resource != null) {
      waiting.remove(started.resource, started);
    }
    super.beforeExecute(thread, entry);
  }

  /** The task's claim arrived: if its reconcile is waiting for a thread, it goes to the front. */
  public void promote(ResourceID resource) {
    Waiting entry = waiting.get(resource);
    if (entry != null && !NOW_DUE.equals(entry.due) && getQueue().remove(entry)) {
      entry.due = NOW_DUE;
      getQueue().offer(entry);
    }
  }

  /** Reads the task from JOSDK's runnable; without the field every reconcile is unknown (first in, first out). */
  static Function<Runnable, ResourceID> josdkResourceOf() {
    Optional<Field> field = resourceField();
    return reconcile -> {
      if (field.isEmpty() || !field.get().getDeclaringClass().isInstance(reconcile)) {
        return null;
      }
      try {
        return (ResourceID) field.get().get(reconcile);
      } catch (IllegalAccessException e) {
        return null;
      }
    };
  }

  static Optional<Field> resourceField() {
    try {
      Field field = Class.forName(JOSDK_RUNNABLE).getDeclaredField(RESOURCE_FIELD);
      field.setAccessible(true);
      return Optional.of(field);
    } catch (ReflectiveOperationException | RuntimeException e) {
      LOG.warn("This JOSDK does not name the resource of a reconcile where expected ({}.{}): reconciles run "
          + "first in, first out, and a due task may wait behind others", JOSDK_RUNNABLE, RESOURCE_FIELD);
      return Optional.empty();
    }
  }

  private static ThreadFactory threadsNamed() {
    AtomicInteger counter = new AtomicInteger();
    return runnable -> new Thread(runnable, "reconciler-" + counter.incrementAndGet());
  }
}
