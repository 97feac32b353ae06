package io.delayedtask.operator.leader;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import io.delayedtask.operator.schedule.ClaimedEntry;
import io.delayedtask.operator.schedule.Disposition;
import io.delayedtask.operator.schedule.RedisConnections;
import io.delayedtask.operator.schedule.RedisSchedule;
import io.delayedtask.operator.schedule.SchedulePoller;
import io.delayedtask.operator.sink.SinkSpecRules;
import io.delayedtask.operator.task.spec.SpecValidator;
import io.delayedtask.operator.testing.FixedTaskCache;
import io.delayedtask.operator.testing.RedisProcess;
import io.lettuce.core.RedisClient;
import io.lettuce.core.api.StatefulRedisConnection;
import io.micrometer.core.instrument.simple.SimpleMeterRegistry;
import java.time.Clock;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CopyOnWriteArrayList;
import org.junit.jupiter.api.Test;

/**
 * A standby holds open what its poller needs before it leads: the wake-up subscription, whose
 * connection costs a cold process about a second to open (the larger part of a new leader's first
 * second, measured in docs/performance.md). The leader's poller then uses that subscription rather
 * than opening one. (That the subscription wakes the poller: AbstractRedisScheduleIT.)
 */
class StandbyReadyToClaimIT {
  private static final Duration WAIT = Duration.ofSeconds(10);

  @Test
  void aStandbyIsSubscribedToWakeUpsBeforeItLeadsAndItsPollerUsesThatSubscription() {
    try (RedisProcess redis = RedisProcess.start();
        RedisClient observer = RedisClient.create(redis.uri());
        StatefulRedisConnection<String, String> look = observer.connect();
        RedisSchedule schedule =
            new RedisSchedule(RedisConnections.standalone(redis.uri()), "standby", 1);
        ScheduleKeeper keeper = standbyKeeper(schedule)) {
      String channel = schedule.keys().wakeupChannel();
      assertThat(subscribers(look, channel)).isZero();

      keeper.start(); // a standby: never activated

      await("the standby subscribed to " + channel)
          .atMost(WAIT)
          .until(() -> subscribers(look, channel) == 1);

      List<ClaimedEntry> claimed = new CopyOnWriteArrayList<>();
      SchedulePoller poller =
          new SchedulePoller(
              schedule,
              entry -> {
                claimed.add(entry);
                return CompletableFuture.completedFuture(Disposition.acknowledge());
              },
              SchedulePoller.Settings.defaults());
      poller.start(); // becoming leader
      try {
        assertThat(subscribers(look, channel)).as("no second subscription").isEqualTo(1);
      } finally {
        poller.stop();
      }
    }
  }

  private static ScheduleKeeper standbyKeeper(RedisSchedule schedule) {
    SimpleMeterRegistry registry = new SimpleMeterRegistry();
    ScheduleResync resync =
        new ScheduleResync(
            FixedTaskCache.of(),
            null,
            schedule,
            new SpecValidator(SinkSpecRules.defaults()),
            registry);
    return new ScheduleKeeper(
        schedule,
        resync,
        Duration.ofMinutes(5),
        Duration.ofMillis(50),
        Clock.systemUTC(),
        registry);
  }

  private static long subscribers(StatefulRedisConnection<String, String> look, String channel) {
    return look.sync().pubsubNumsub(channel).getOrDefault(channel, 0L);
  }
}
