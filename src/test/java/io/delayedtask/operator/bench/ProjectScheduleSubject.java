package io.delayedtask.operator.bench;

import io.delayedtask.operator.schedule.Disposition;
import io.delayedtask.operator.schedule.RedisConnections;
import io.delayedtask.operator.schedule.RedisSchedule;
import io.delayedtask.operator.schedule.SchedulePoller;
import java.time.Instant;
import java.util.Optional;

/**
 * This project's schedule ({@link RedisSchedule}, one shard) with its {@link SchedulePoller} at the
 * default settings the operator runs with. The handler does what a real one must do at least
 * (acknowledge), so acks are part of the measured cost.
 */
final class ProjectScheduleSubject implements DelayQueueUnderTest {
  private final RedisSchedule schedule;
  private SchedulePoller poller;

  ProjectScheduleSubject(String uri) {
    schedule =
        new RedisSchedule(
            RedisConnections.standalone(uri, Optional.empty(), RedisConnections.DEFAULT_TIMEOUT),
            "bench",
            1);
  }

  @Override
  public String name() {
    return "delayed-task-operator schedule + poller";
  }

  @Override
  public void start(DeliverySink sink) {
    poller =
        new SchedulePoller(
            schedule,
            io.delayedtask.operator.schedule.DueEntryHandler.blocking(
                entry -> {
                  sink.delivered(entry.id());
                  sink.claimedByServerClock(entry.id(), entry.claimedAt());
                  return Disposition.acknowledge();
                }),
            SchedulePoller.Settings.defaults());
    poller.start();
  }

  @Override
  public void schedule(String id, long dueEpochMillis) {
    schedule.schedule(id, Instant.ofEpochMilli(dueEpochMillis));
  }

  @Override
  public void close() {
    if (poller != null) {
      poller.close();
    }
    schedule.close();
  }
}
