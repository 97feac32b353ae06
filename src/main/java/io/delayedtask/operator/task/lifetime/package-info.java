/**
 * How late a task may still fire and how long it stays once finished: the starting deadline and the
 * TTL (the task's own, else the operator's default), and the GitOps tool whose mark keeps a
 * finished task from being deleted. The reconciler decides with them; the informer cache keeps the
 * mark.
 */
package io.delayedtask.operator.task.lifetime;
