/**
 * The one writer of a task: JOSDK calls {@link
 * io.delayedtask.operator.reconcile.DelayedTaskReconciler}, which gathers the facts, lets the pure
 * {@link io.delayedtask.operator.reconcile.TaskDecider} plan, and carries the plan out (Redis
 * entry, Job, status, Events, delivery, claim). The reconcile threads, with due tasks first, and
 * the admission check of a task's author live here too.
 */
package io.delayedtask.operator.reconcile;
