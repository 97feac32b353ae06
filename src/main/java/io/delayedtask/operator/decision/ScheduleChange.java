package io.delayedtask.operator.decision;

import java.time.Instant;

/** What becomes of a task's Redis entry. */
public sealed interface ScheduleChange {
  /** The entry is as it should be (or a claim will put it right when it is settled). */
  record Keep() implements ScheduleChange {}

  /** Add the entry, or move it to this due time (Redis's clock for a delivery's retry). */
  record Write(Instant due) implements ScheduleChange {}

  /** Remove the entry, waiting or claimed. */
  record Remove() implements ScheduleChange {}

  ScheduleChange KEEP = new Keep();
  ScheduleChange REMOVE = new Remove();
}
