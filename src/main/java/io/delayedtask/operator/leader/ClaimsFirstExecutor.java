package io.delayedtask.operator.leader;

import io.javaoperatorsdk.operator.processing.event.ResourceID;
import java.time.Duration;
import java.util.AbstractQueue;
import java.util.ArrayList;
import java.util.Collection;
import java.util.Iterator;
import java.util.LinkedHashMap;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Map;
import java.util.concurrent.BlockingQueue;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ThreadFactory;
import java.util.concurrent.ThreadPoolExecutor;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.locks.Condition;
import java.util.concurrent.locks.ReentrantLock;
import java.util.function.Predicate;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;
import org.slf4j.MDC;

/**
 * JOSDK's reconcile threads, with three lanes: the reconcile of a task whose schedule entry the
 * leader has claimed (its due time has come) goes first; the reconcile that records a delivery's
 * answer (or its failure) takes namespaces in turn, at most {@link #OUTCOMES_AT_ONCE} at once;
 * every other reconcile waits in arrival order. So a flood of other work (thousands of tasks
 * created at once, an operator starting on a cluster full of them) does not make a due task wait
 * behind it, and the rest is not starved either: after {@link #CLAIMS_IN_A_ROW} claimed reconciles
 * in a row, one waiting in another lane goes next.
 *
 * <p>Why outcomes have a lane of their own: they come in bursts. Attempts sent together time out
 * together (hundreds of a tenant's tasks due at once to a receiver that never answers, every
 * {@code delivery.timeout}), and each outcome is a status write and an Event. Run on every thread
 * at once, such a burst took the CPU from the due tasks of every other namespace for a second or
 * two (a ninth namespace's delivery p99 moved by +64 to +82 ms beside 8 hanging ones; see
 * docs/development/scale-lab.md). A few at a time, the burst is recorded a little later and the
 * due tasks keep their CPU; nothing waits for an outcome's record but its own task's next step.
 *
 * <p>Which task a reconcile is for is read from JOSDK's logging context: JOSDK puts the resource's
 * name and namespace into the MDC ({@code resource.name}, {@code resource.namespace}, documented
 * and on by default, {@code JAVA_OPERATOR_SDK_USE_MDC}) while it submits the reconcile, on the
 * submitting thread. A reconcile submitted without it (MDC turned off) waits in arrival order,
 * said once in the log. A reconcile already waiting when its task's claim arrives moves to the
 * claimed lane ({@link #promote}). Deciding the lane is a map lookup: JOSDK submits while holding
 * its event processor's lock.
 */
public final class ClaimsFirstExecutor extends ThreadPoolExecutor {
  private static final Logger LOG = LoggerFactory.getLogger(ClaimsFirstExecutor.class);
  /** JOSDK's MDC keys (MDCUtils) for the resource a reconcile is submitted for. */
  static final String MDC_NAME = "resource.name";
  static final String MDC_NAMESPACE = "resource.namespace";
  /** Claimed reconciles that may go in a row while others wait. */
  static final int CLAIMS_IN_A_ROW = 4;
  /** Reconciles recording a delivery's outcome that run at once (a few: each is mostly a status write). */
  static final int OUTCOMES_AT_ONCE = 4;

  private final Predicate<ResourceID> holdsClaim;
  private final Predicate<ResourceID> awaitsOutcomeRecord;
  private final Map<ResourceID, Queued> waiting = new ConcurrentHashMap<>();
  private final AtomicBoolean unknownReported = new AtomicBoolean();

  /** Where a reconcile waits for a thread. */
  enum Lane { CLAIMED, OUTCOME, OTHER }

  /** A reconcile waiting for a thread, the task it is for (null: unknown), and the lane it waits in. */
  private static final class Queued implements Runnable {
    final Runnable reconcile;
    final ResourceID task;
    final Lane lane;
    /** Set under the lanes' lock when it leaves the outcome lane for a thread: counted until it ends. */
    boolean countedAsOutcome;

    Queued(Runnable reconcile, ResourceID task, Lane lane) {
      this.reconcile = reconcile;
      this.task = task;
      this.lane = lane;
    }

    @Override
    public void run() {
      reconcile.run();
    }
  }

  /**
   * {@code holdsClaim}: whether a claim of that task waits for its reconcile;
   * {@code awaitsOutcomeRecord}: whether a delivery's outcome for that task waits to be recorded.
   */
  public ClaimsFirstExecutor(int threads, Predicate<ResourceID> holdsClaim, Predicate<ResourceID> awaitsOutcomeRecord) {
    super(threads, threads, 0, TimeUnit.MILLISECONDS, new Lanes(), threadsNamed());
    this.holdsClaim = holdsClaim;
    this.awaitsOutcomeRecord = awaitsOutcomeRecord;
    // Every reconcile goes through the lanes: a pool still growing would run a submission on a
    // new thread at once, whatever its lane.
    prestartAllCoreThreads();
  }

  /**
   * Holds the outcome and other lanes (claimed reconciles still run) until {@code scheduleReady} completes, or
   * {@code atMost} has passed. A new leader's first resync then writes the missing entries without
   * sharing the machine with the first reconciles of every task the informer has just listed (all
   * of them at once when an operator starts on a full cluster), so the schedule, and the firing of
   * what is due, come first. Bounded, so a resync that cannot run (Redis down) holds nothing up for
   * long; the resync's slow part (GETs of entries whose task is gone) comes after the release.
   */
  public void holdOthersUntil(CompletableFuture<?> scheduleReady, Duration atMost) {
    lanes().holdOthers(true);
    scheduleReady.copy().completeOnTimeout(null, atMost.toMillis(), TimeUnit.MILLISECONDS)
        .whenComplete((done, error) -> lanes().holdOthers(false));
  }

  @Override
  public void execute(Runnable reconcile) {
    ResourceID task = submittedFor();
    Queued queued = new Queued(reconcile, task, laneOf(task));
    if (task != null) {
      waiting.put(task, queued);
    } else if (unknownReported.compareAndSet(false, true)) {
      LOG.warn("JOSDK submitted a reconcile without naming its resource in the MDC ({} turned off?): reconciles "
          + "run in arrival order, and a due task may wait behind others", "JAVA_OPERATOR_SDK_USE_MDC");
    }
    super.execute(queued);
  }

  private Lane laneOf(ResourceID task) {
    if (task == null) {
      return Lane.OTHER;
    }
    return holdsClaim.test(task) ? Lane.CLAIMED : awaitsOutcomeRecord.test(task) ? Lane.OUTCOME : Lane.OTHER;
  }

  @Override
  protected void beforeExecute(Thread thread, Runnable runnable) {
    Queued started = (Queued) runnable;
    if (started.task != null) {
      waiting.remove(started.task, started);
    }
    super.beforeExecute(thread, runnable);
  }

  @Override
  protected void afterExecute(Runnable runnable, Throwable error) {
    super.afterExecute(runnable, error);
    if (runnable instanceof Queued ended) {
      lanes().ended(ended);
    }
  }

  /** The task's claim arrived: if its reconcile waits for a thread, it moves to the claimed lane. */
  public void promote(ResourceID task) {
    Queued queued = waiting.get(task);
    if (queued != null) {
      lanes().promote(queued);
    }
  }

  private Lanes lanes() {
    return (Lanes) getQueue();
  }

  private static ResourceID submittedFor() {
    String name = MDC.get(MDC_NAME);
    return name == null ? null : new ResourceID(name, MDC.get(MDC_NAMESPACE));
  }

  private static ThreadFactory threadsNamed() {
    AtomicInteger counter = new AtomicInteger();
    return runnable -> new Thread(runnable, "reconciler-" + counter.incrementAndGet());
  }

  /**
   * The work queue: claimed reconciles first, at most {@link #CLAIMS_IN_A_ROW} in a row while
   * others wait; then outcomes and others by turns, outcomes at most {@link #OUTCOMES_AT_ONCE}
   * running at once. The claimed and outcome lanes take namespaces in turn ({@link
   * NamespacesInTurn}), the other lane goes in arrival order. Insertion-ordered sets, so promoting
   * one is O(1).
   */
  static final class Lanes extends AbstractQueue<Runnable> implements BlockingQueue<Runnable> {
    private final ReentrantLock lock = new ReentrantLock();
    private final Condition notEmpty = lock.newCondition();
    private final NamespacesInTurn claimed = new NamespacesInTurn();
    private final NamespacesInTurn outcomes = new NamespacesInTurn();
    private final LinkedHashSet<Runnable> others = new LinkedHashSet<>();
    private int claimedInARow;
    private int outcomesRunning;
    private boolean outcomeGoesBeforeOther = true;
    private boolean othersHeld;

    /** A reconcile ended: if it came from the outcome lane, another may start. */
    void ended(Queued ended) {
      lock.lock();
      try {
        if (ended.countedAsOutcome) {
          ended.countedAsOutcome = false;
          outcomesRunning--;
          notEmpty.signal();
        }
      } finally {
        lock.unlock();
      }
    }

    void holdOthers(boolean hold) {
      lock.lock();
      try {
        othersHeld = hold;
        if (!hold) {
          notEmpty.signalAll();
        }
      } finally {
        lock.unlock();
      }
    }

    void promote(Runnable runnable) {
      lock.lock();
      try {
        if (others.remove(runnable) || outcomes.remove(runnable)) {
          claimed.add(runnable);
        }
      } finally {
        lock.unlock();
      }
    }

    @Override
    public boolean offer(Runnable runnable) {
      Lane lane = runnable instanceof Queued queued ? queued.lane : Lane.OTHER;
      lock.lock();
      try {
        switch (lane) {
          case CLAIMED -> claimed.add(runnable);
          case OUTCOME -> outcomes.add(runnable);
          case OTHER -> others.add(runnable);
        }
        notEmpty.signal();
        return true;
      } finally {
        lock.unlock();
      }
    }

    @Override
    public Runnable poll() {
      lock.lock();
      try {
        return next();
      } finally {
        lock.unlock();
      }
    }

    /** Under the lock. */
    private Runnable next() {
      boolean outcomeMayGo = !othersHeld && !outcomes.isEmpty() && outcomesRunning < OUTCOMES_AT_ONCE;
      boolean otherMayGo = !othersHeld && !others.isEmpty();
      boolean claimedTurn = !claimed.isEmpty() && (!(outcomeMayGo || otherMayGo) || claimedInARow < CLAIMS_IN_A_ROW);
      if (claimedTurn) {
        claimedInARow++;
        return claimed.poll();
      }
      if (outcomeMayGo && (!otherMayGo || outcomeGoesBeforeOther)) {
        claimedInARow = 0;
        outcomeGoesBeforeOther = false;
        Runnable next = outcomes.poll();
        if (next instanceof Queued queued) {
          queued.countedAsOutcome = true;
          outcomesRunning++;
        }
        return next;
      }
      if (!otherMayGo) {
        return null;
      }
      claimedInARow = 0;
      outcomeGoesBeforeOther = true;
      Iterator<Runnable> first = others.iterator();
      Runnable next = first.next();
      first.remove();
      return next;
    }

    @Override
    public Runnable take() throws InterruptedException {
      lock.lockInterruptibly();
      try {
        Runnable next;
        while ((next = next()) == null) {
          notEmpty.await();
        }
        return next;
      } finally {
        lock.unlock();
      }
    }

    @Override
    public Runnable poll(long timeout, TimeUnit unit) throws InterruptedException {
      long nanos = unit.toNanos(timeout);
      lock.lockInterruptibly();
      try {
        Runnable next;
        while ((next = next()) == null) {
          if (nanos <= 0) {
            return null;
          }
          nanos = notEmpty.awaitNanos(nanos);
        }
        return next;
      } finally {
        lock.unlock();
      }
    }

    @Override
    public Runnable peek() {
      lock.lock();
      try {
        return !claimed.isEmpty() ? claimed.peek() : !outcomes.isEmpty() ? outcomes.peek()
            : others.isEmpty() ? null : others.iterator().next();
      } finally {
        lock.unlock();
      }
    }

    @Override
    public boolean remove(Object runnable) {
      lock.lock();
      try {
        return claimed.remove(runnable) || outcomes.remove(runnable) || others.remove(runnable);
      } finally {
        lock.unlock();
      }
    }

    @Override
    public void put(Runnable runnable) {
      offer(runnable);
    }

    @Override
    public boolean offer(Runnable runnable, long timeout, TimeUnit unit) {
      return offer(runnable);
    }

    @Override
    public int remainingCapacity() {
      return Integer.MAX_VALUE;
    }

    @Override
    public int drainTo(Collection<? super Runnable> sink) {
      return drainTo(sink, Integer.MAX_VALUE);
    }

    @Override
    public int drainTo(Collection<? super Runnable> sink, int max) {
      lock.lock();
      try {
        // Only when the pool shuts down: everything goes, held or not.
        int drained = 0;
        while (drained < max && !claimed.isEmpty()) {
          sink.add(claimed.poll());
          drained++;
        }
        while (drained < max && !outcomes.isEmpty()) {
          sink.add(outcomes.poll());
          drained++;
        }
        Iterator<Runnable> queued = others.iterator();
        while (drained < max && queued.hasNext()) {
          sink.add(queued.next());
          queued.remove();
          drained++;
        }
        return drained;
      } finally {
        lock.unlock();
      }
    }

    /** A snapshot, claimed lane first, then outcomes, then the others. */
    @Override
    public Iterator<Runnable> iterator() {
      lock.lock();
      try {
        List<Runnable> all = claimed.snapshot();
        all.addAll(outcomes.snapshot());
        all.addAll(others);
        return all.iterator();
      } finally {
        lock.unlock();
      }
    }

    @Override
    public int size() {
      lock.lock();
      try {
        return claimed.size() + outcomes.size() + others.size();
      } finally {
        lock.unlock();
      }
    }
  }

  /**
   * Claimed reconciles (or outcomes), one namespace's turn after another's, each namespace's in
   * arrival order: a namespace with hundreds due at once (retries of deliveries that all timed out
   * together) does not make another namespace's due task wait behind them all, only behind one of
   * each. Under {@link Lanes}' lock.
   */
  static final class NamespacesInTurn {
    /** Namespace to its waiting reconciles; the first entry's namespace has the next turn. */
    private final LinkedHashMap<String, LinkedHashSet<Runnable>> byNamespace = new LinkedHashMap<>();
    private int size;

    void add(Runnable runnable) {
      if (byNamespace.computeIfAbsent(namespaceOf(runnable), ns -> new LinkedHashSet<>()).add(runnable)) {
        size++;
      }
    }

    boolean remove(Object runnable) {
      if (!(runnable instanceof Runnable queued)) {
        return false;
      }
      String namespace = namespaceOf(queued);
      LinkedHashSet<Runnable> waiting = byNamespace.get(namespace);
      if (waiting == null || !waiting.remove(queued)) {
        return false;
      }
      size--;
      if (waiting.isEmpty()) {
        byNamespace.remove(namespace);
      }
      return true;
    }

    /** The next namespace's first reconcile; that namespace goes to the back of the turns. */
    Runnable poll() {
      Iterator<Map.Entry<String, LinkedHashSet<Runnable>>> turns = byNamespace.entrySet().iterator();
      if (!turns.hasNext()) {
        return null;
      }
      Map.Entry<String, LinkedHashSet<Runnable>> turn = turns.next();
      turns.remove();
      Iterator<Runnable> waiting = turn.getValue().iterator();
      Runnable next = waiting.next();
      waiting.remove();
      size--;
      if (!turn.getValue().isEmpty()) {
        byNamespace.put(turn.getKey(), turn.getValue());
      }
      return next;
    }

    Runnable peek() {
      return byNamespace.isEmpty() ? null : byNamespace.values().iterator().next().iterator().next();
    }

    boolean isEmpty() {
      return size == 0;
    }

    int size() {
      return size;
    }

    /** In the order they would run. */
    List<Runnable> snapshot() {
      List<Runnable> all = new ArrayList<>();
      List<Iterator<Runnable>> lanes = new ArrayList<>();
      byNamespace.values().forEach(waiting -> lanes.add(waiting.iterator()));
      boolean any = true;
      while (any) {
        any = false;
        for (Iterator<Runnable> lane : lanes) {
          if (lane.hasNext()) {
            all.add(lane.next());
            any = true;
          }
        }
      }
      return all;
    }

    private static String namespaceOf(Runnable runnable) {
      return runnable instanceof Queued queued && queued.task != null && queued.task.getNamespace().isPresent()
          ? queued.task.getNamespace().get() : "";
    }
  }
}
