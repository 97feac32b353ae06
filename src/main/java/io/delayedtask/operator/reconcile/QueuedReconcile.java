package io.delayedtask.operator.reconcile;

import io.javaoperatorsdk.operator.processing.event.ResourceID;

/**
 * A reconcile waiting in {@link ReconcileLanes} for a thread of the {@link ReconcileExecutor}: the
 * task it is for (null when JOSDK did not name it) and the lane it waits in.
 */
final class QueuedReconcile implements Runnable {
  /** Where a reconcile waits for a thread. */
  enum Lane {
    CLAIMED,
    OUTCOME,
    OTHER
  }

  final Runnable reconcile;
  final ResourceID task;
  final Lane lane;

  /**
   * Set under the lanes' lock when it leaves the outcome lane for a thread: counted until it ends.
   */
  boolean countedAsOutcome;

  QueuedReconcile(Runnable reconcile, ResourceID task, Lane lane) {
    this.reconcile = reconcile;
    this.task = task;
    this.lane = lane;
  }

  /** The namespace whose turn it waits for; "" when its task or namespace is unknown. */
  static String namespaceOf(Runnable runnable) {
    return runnable instanceof QueuedReconcile queued
            && queued.task != null
            && queued.task.getNamespace().isPresent()
        ? queued.task.getNamespace().get()
        : "";
  }

  @Override
  public void run() {
    reconcile.run();
  }
}
