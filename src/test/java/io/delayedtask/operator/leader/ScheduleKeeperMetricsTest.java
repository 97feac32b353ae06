package io.delayedtask.operator.leader;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import io.delayedtask.operator.schedule.ScheduleCounts;
import io.delayedtask.operator.schedule.TaskSchedule;
import io.delayedtask.operator.sink.SinkSpecRules;
import io.delayedtask.operator.task.spec.SpecValidator;
import io.delayedtask.operator.testing.FixedTaskCache;
import io.delayedtask.operator.testing.UnusedSchedule;
import io.micrometer.core.instrument.simple.SimpleMeterRegistry;
import java.time.Clock;
import java.time.Duration;
import java.time.Instant;
import java.time.ZoneOffset;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

/**
 * The gauges and the counter the alerts read: delayedtask_redis_up, delayedtask_leader and
 * delayedtask_resync_drift_repairs_total (repairs of periodic resyncs only).
 */
class ScheduleKeeperMetricsTest {
  private static final Duration RESYNC_INTERVAL = Duration.ofMinutes(5);
  private static final Duration WAIT = Duration.ofSeconds(5);

  private final SimpleMeterRegistry registry = new SimpleMeterRegistry();
  private final FakeSchedule schedule = new FakeSchedule();
  private final CountingResync resync = new CountingResync(schedule);
  private final MovableClock clock = new MovableClock(Instant.parse("2026-12-03T07:00:00Z"));
  private final ScheduleKeeper keeper =
      new ScheduleKeeper(schedule, resync, RESYNC_INTERVAL, Duration.ofMillis(10), clock, registry);

  @AfterEach
  void stop() {
    keeper.close();
  }

  @Test
  void redisUpFollowsTheProbe() {
    keeper.start();
    await().atMost(WAIT).until(() -> gauge("delayedtask.redis.up") == 1.0);
    schedule.down = true;
    await().atMost(WAIT).until(() -> gauge("delayedtask.redis.up") == 0.0);
    schedule.down = false;
    await().atMost(WAIT).until(() -> gauge("delayedtask.redis.up") == 1.0);
  }

  @Test
  void onlyRepairsOfAPeriodicResyncCountAsDrift() {
    keeper.start();
    keeper.activate(); // becoming leader: the rebuild's repairs are expected
    await().atMost(WAIT).until(() -> resync.runs.get() == 1);
    assertThat(driftRepairs()).isZero();

    clock.advance(RESYNC_INTERVAL.plusSeconds(1)); // the periodic one: its repairs are drift
    await().atMost(WAIT).until(() -> resync.runs.get() == 2);
    await().atMost(WAIT).until(() -> driftRepairs() == 3.0);

    schedule.identity = "restarted"; // a Redis restart or failover: the rebuild is expected again
    await().atMost(WAIT).until(() -> resync.runs.get() == 3);
    assertThat(driftRepairs()).isEqualTo(3.0);
  }

  @Test
  void anActivationIsToldWhenItsFirstResyncHasRun() {
    List<CompletableFuture<Void>> told = new CopyOnWriteArrayList<>();
    keeper.onActivate(told::add);
    schedule.down = true; // no resync while Redis does not answer
    keeper.start();
    keeper.activate();
    assertThat(told).hasSize(1);
    await().during(Duration.ofMillis(200)).atMost(WAIT).until(() -> !told.get(0).isDone());

    schedule.down = false;

    await().atMost(WAIT).until(() -> told.get(0).isDone());
    assertThat(resync.runs.get()).isEqualTo(1);
  }

  @Test
  void leaderIsOneOnlyWhileThisInstanceFires() {
    Leadership firing =
        new Leadership(keeper, new DueClaims(FixedTaskCache.of(), null), () -> () -> {});
    firing.bindTo(registry);
    assertThat(gauge("delayedtask.leader")).isZero();
    firing.start();
    assertThat(gauge("delayedtask.leader")).isEqualTo(1.0);
    firing.stop();
    assertThat(gauge("delayedtask.leader")).isZero();
  }

  private double gauge(String name) {
    return registry.get(name).gauge().value();
  }

  private double driftRepairs() {
    return registry.get("delayedtask.resync.drift.repairs").counter().count();
  }

  /**
   * Each run adds two entries and moves one; of these, three belong to already reconciled tasks.
   */
  private static final class CountingResync extends ScheduleResync {
    final AtomicInteger runs = new AtomicInteger();

    CountingResync(TaskSchedule schedule) {
      super(
          FixedTaskCache.of(),
          null,
          schedule,
          new SpecValidator(SinkSpecRules.defaults()),
          new SimpleMeterRegistry());
    }

    @Override
    public Repairs run(Runnable entriesWritten) {
      runs.incrementAndGet();
      entriesWritten.run();
      return new Repairs(2, 4, 1, 3);
    }
  }

  private static final class MovableClock extends Clock {
    private volatile Instant now;

    MovableClock(Instant start) {
      now = start;
    }

    void advance(Duration by) {
      now = now.plus(by);
    }

    @Override
    public ZoneOffset getZone() {
      return ZoneOffset.UTC;
    }

    @Override
    public Clock withZone(java.time.ZoneId zone) {
      throw new UnsupportedOperationException();
    }

    @Override
    public Instant instant() {
      return now;
    }
  }

  /** Answers the keeper's probe (identity and counts) and fails it while {@code down}. */
  private static final class FakeSchedule extends UnusedSchedule {
    volatile boolean down;
    volatile String identity = "first";

    @Override
    public String serverIdentity() {
      if (down) {
        throw new IllegalStateException("Redis is down");
      }
      return identity;
    }

    @Override
    public ScheduleCounts counts() {
      return new ScheduleCounts(0, 0, Duration.ZERO);
    }
  }
}
