package io.delayedtask.operator;

import io.delayedtask.operator.config.OperatorConfig;
import io.delayedtask.operator.schedule.DueEntryHandler;
import io.delayedtask.operator.schedule.TaskSchedule;
import io.micrometer.core.instrument.MeterRegistry;
import java.time.Clock;

/** Builds the Redis schedule and its poller (implemented in schedule/). */
final class ScheduleWiring {
  private ScheduleWiring() {}

  static TaskSchedule connect(OperatorConfig config, MeterRegistry registry, Clock clock) {
    throw new UnsupportedOperationException("the Redis schedule (branch schedule) is not merged yet");
  }

  /** Starts the poller with this handler; closing the result stops it. */
  static AutoCloseable startPoller(TaskSchedule schedule, DueEntryHandler handler, MeterRegistry registry,
      Clock clock) {
    throw new UnsupportedOperationException("the schedule poller (branch schedule) is not merged yet");
  }
}
