package io.delayedtask.operator;

import io.delayedtask.operator.config.OperatorConfig;
import io.delayedtask.operator.schedule.DueEntryHandler;
import io.delayedtask.operator.schedule.RedisSchedule;
import io.delayedtask.operator.schedule.SchedulePoller;
import io.delayedtask.operator.schedule.TaskSchedule;

/** Builds the Redis schedule and its poller (implemented in schedule/). */
final class ScheduleWiring {
  private ScheduleWiring() {}

  /** The schedule the configuration names. Lettuce connects lazily: Redis may still be down. */
  static TaskSchedule connect(OperatorConfig config) {
    return RedisSchedule.open(config);
  }

  /** Starts the poller with this handler; closing the result stops it. */
  static AutoCloseable startPoller(TaskSchedule schedule, DueEntryHandler handler) {
    SchedulePoller poller = new SchedulePoller(schedule, handler, SchedulePoller.Settings.defaults());
    poller.start();
    return poller;
  }
}
