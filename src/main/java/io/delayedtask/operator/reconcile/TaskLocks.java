package io.delayedtask.operator.reconcile;

import java.util.concurrent.locks.ReentrantLock;
import java.util.function.Supplier;

/**
 * Serialises, per task, the two writers of its status in this process: the reconciler and the
 * firer. Each reads the task, decides and writes while holding the task's lock, so neither can
 * overwrite what the other wrote in between (the API server's resourceVersion check does the same
 * across processes; the fabric8 mock API server does not check it). Striped: a fixed set of locks.
 */
public final class TaskLocks {
  private static final int STRIPES = 64;
  private final ReentrantLock[] locks = new ReentrantLock[STRIPES];

  public TaskLocks() {
    for (int i = 0; i < STRIPES; i++) {
      locks[i] = new ReentrantLock();
    }
  }

  public <T> T withLock(String namespace, String name, Supplier<T> action) {
    ReentrantLock lock = locks[Math.floorMod((namespace + "/" + name).hashCode(), STRIPES)];
    lock.lock();
    try {
      return action.get();
    } finally {
      lock.unlock();
    }
  }
}
