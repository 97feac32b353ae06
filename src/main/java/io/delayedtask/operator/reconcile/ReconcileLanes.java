package io.delayedtask.operator.reconcile;

import io.delayedtask.operator.reconcile.QueuedReconcile.Lane;
import java.util.AbstractQueue;
import java.util.Collection;
import java.util.Iterator;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.concurrent.BlockingQueue;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.locks.Condition;
import java.util.concurrent.locks.ReentrantLock;

/**
 * The work queue of the {@link ReconcileExecutor}: claimed reconciles first, at most {@link
 * #CLAIMS_IN_A_ROW} in a row while others wait; then outcomes and others by turns, outcomes at most
 * {@link #OUTCOMES_AT_ONCE} running at once. The claimed and outcome lanes take namespaces in turn
 * ({@link NamespacesInTurn}), the other lane goes in arrival order. Insertion-ordered sets, so
 * promoting one is O(1).
 */
final class ReconcileLanes extends AbstractQueue<Runnable> implements BlockingQueue<Runnable> {
  /** Claimed reconciles that may go in a row while others wait. */
  static final int CLAIMS_IN_A_ROW = 4;

  /**
   * Reconciles recording a delivery's outcome that run at once (a few: each is mostly a status
   * write).
   */
  static final int OUTCOMES_AT_ONCE = 4;

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
  void ended(QueuedReconcile ended) {
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
    Lane lane = runnable instanceof QueuedReconcile queued ? queued.lane : Lane.OTHER;
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
    boolean claimedTurn =
        !claimed.isEmpty() && (!(outcomeMayGo || otherMayGo) || claimedInARow < CLAIMS_IN_A_ROW);
    if (claimedTurn) {
      claimedInARow++;
      return claimed.poll();
    }
    if (outcomeMayGo && (!otherMayGo || outcomeGoesBeforeOther)) {
      claimedInARow = 0;
      outcomeGoesBeforeOther = false;
      Runnable next = outcomes.poll();
      if (next instanceof QueuedReconcile queued) {
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
      return !claimed.isEmpty()
          ? claimed.peek()
          : !outcomes.isEmpty()
              ? outcomes.peek()
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
