package io.delayedtask.operator.reconcile;

import io.delayedtask.operator.leader.InformerTaskCache;
import io.delayedtask.operator.leader.QueueHolds;
import java.time.Clock;
import java.time.Instant;
import java.util.function.BooleanSupplier;

/**
 * What a reconcile reads about a task's world beyond JOSDK's context: the time, whether this
 * instance leads, whether the admission policy is in place, what the task's queue holds; and the
 * task cache the leader's side reads, which the reconciler hands JOSDK's cache to.
 *
 * @param tasks the leader's view of the tasks (resync, claims), attached to JOSDK's cache
 * @param admission whether the admission policy is in place: without it no Job is created and no
 *     token sent (the task waits)
 * @param queueHolds the due tasks the leader's claims of the queues hold (their condition Queued)
 * @param clock the time a decision is made at
 * @param leading whether this instance leads; JOSDK keeps reconciling after the lease is lost when
 *     the process does not exit (in-process tests), and a former leader must not write then
 */
public record TaskWorld(
    InformerTaskCache tasks,
    AdmissionPolicies admission,
    QueueHolds queueHolds,
    Clock clock,
    BooleanSupplier leading) {

  boolean leads() {
    return leading.getAsBoolean();
  }

  Instant now() {
    return clock.instant();
  }
}
