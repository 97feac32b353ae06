package io.delayedtask.operator.sink;

import io.delayedtask.operator.api.v1alpha1.DelayedTask;
import io.delayedtask.operator.schedule.ClaimedEntry;
import java.time.Instant;

/**
 * Starts a sink delivery attempt and returns at once: its outcome reaches {@link DeliveryOutcomes},
 * whose event reconciles the task again to record it.
 */
public interface DeliveryStarter {
  void start(DelayedTask task, Instant due, ClaimedEntry claim, DeliveryAttempt attempt);
}
