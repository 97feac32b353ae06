package io.delayedtask.operator.reconcile;

import io.delayedtask.operator.leader.DueClaims;
import io.delayedtask.operator.schedule.TaskSchedule;

/**
 * Where a reconcile changes the schedule: the task's entry in Redis, the claim it settles, and who
 * repairs the schedule when Redis could not be written.
 *
 * @param entries the Redis schedule (entries, queue slots)
 * @param claims the leader's claims handed to the reconciler, settled when decided
 * @param behind called when a Redis write failed: the schedule is repaired in bulk (resync) as soon
 *     as Redis answers, instead of entry by entry
 */
public record ScheduleSide(TaskSchedule entries, DueClaims claims, Runnable behind) {

  /** A write to Redis failed: the resync repairs what it left undone. */
  void fellBehind() {
    behind.run();
  }
}
