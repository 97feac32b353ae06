/**
 * What a task's status says and how it is written: the conditions (kstatus's Ready, Reconciling and
 * Stalled among them), whether a due time was handled or waits ({@link
 * io.delayedtask.operator.task.status.TaskState}, shared by the reconcile and the resync), and a
 * fire-now request. It reads a spec's verdict from {@code task.spec} and never writes anything
 * itself: the reconciler does.
 */
package io.delayedtask.operator.task.status;
