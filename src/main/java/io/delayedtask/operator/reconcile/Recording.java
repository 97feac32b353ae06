package io.delayedtask.operator.reconcile;

import io.delayedtask.operator.api.v1alpha1.DelayedTask;
import io.delayedtask.operator.decision.TaskEvent;
import io.delayedtask.operator.trace.Tracing;

/**
 * Where a reconcile records what it did, after the status write that goes with it: Events on the
 * task, the operator's metrics, and the firing's span.
 *
 * @param events the task's Events
 * @param metrics fire lag, claim outcomes, delivery attempts
 * @param tracing a {@code delayedtask.fire} span per firing (off unless OpenTelemetry's variables
 *     ask)
 */
public record Recording(TaskEvents events, FireMetrics metrics, Tracing tracing) {

  /** A decision's Event, on its task. */
  void event(DelayedTask task, TaskEvent event) {
    if (event.warning()) {
      events.warning(task, event.reason(), event.message());
    } else {
      events.normal(task, event.reason(), event.message());
    }
  }
}
