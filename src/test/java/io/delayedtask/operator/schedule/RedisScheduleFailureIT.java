package io.delayedtask.operator.schedule;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.assertj.core.api.Assertions.catchThrowable;
import static org.awaitility.Awaitility.await;

import io.delayedtask.operator.config.OperatorConfig;
import io.delayedtask.operator.testing.RedisProcess;
import java.time.Duration;
import java.time.Instant;
import java.time.temporal.ChronoUnit;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.TreeMap;
import java.util.concurrent.CopyOnWriteArrayList;
import org.junit.jupiter.api.Test;

/** Redis going away, coming back, and refusing a password: clear errors, no crash, recovery. */
class RedisScheduleFailureIT {
  private static final Duration TIMEOUT = Duration.ofSeconds(2);

  @Test
  void aDownRedisGivesAClearErrorAndTheScheduleRecoversAfterARestart() {
    try (RedisProcess redis = RedisProcess.start();
        RedisSchedule schedule =
            new RedisSchedule(connect(redis.uri(), Optional.empty()), "down", 1)) {
      schedule.schedule("before", Instant.now().minusSeconds(1));
      String identityBefore = schedule.serverIdentity();

      redis.kill();
      assertThatThrownBy(() -> schedule.schedule("during", Instant.now()))
          .isInstanceOf(ScheduleUnavailableException.class)
          .hasMessageContaining("Redis at " + redis.uri());
      assertThatThrownBy(() -> schedule.claimDue(10, Duration.ofMinutes(1)))
          .isInstanceOf(ScheduleUnavailableException.class);

      redis.restart();
      await()
          .atMost(Duration.ofSeconds(10))
          .ignoreException(ScheduleUnavailableException.class)
          .until(
              () -> {
                schedule.schedule("after", ScheduleProbe.serverTime(schedule).minusSeconds(1));
                return true;
              });
      assertThat(schedule.serverIdentity())
          .as("a restarted Redis has a new run_id")
          .isNotEqualTo(identityBefore);
      assertThat(schedule.claimDue(10, Duration.ofMinutes(1)).entries())
          .as("the restarted Redis lost its data; the operator's resync rebuilds it")
          .extracting(ClaimedEntry::id)
          .containsExactly("after");
    }
  }

  @Test
  void aScheduleOpenedWhileRedisIsDownConnectsWhenRedisComesUp() {
    try (RedisProcess redis = RedisProcess.start()) {
      redis.kill();
      try (RedisSchedule schedule =
          new RedisSchedule(connect(redis.uri(), Optional.empty()), "late", 1)) {
        assertThatThrownBy(() -> ScheduleProbe.serverTime(schedule))
            .isInstanceOf(ScheduleUnavailableException.class)
            .hasMessageContaining("Redis at " + redis.uri() + " is unavailable (connect)");
        redis.restart();
        assertThat(ScheduleProbe.serverTime(schedule)).isNotNull();
      }
    }
  }

  @Test
  void thePollerKeepsGoingThroughAnOutage() {
    try (RedisProcess redis = RedisProcess.start();
        RedisSchedule schedule =
            new RedisSchedule(connect(redis.uri(), Optional.empty()), "outage", 1)) {
      List<String> handled = new CopyOnWriteArrayList<>();
      try (SchedulePoller poller =
          new SchedulePoller(
              schedule,
              DueEntryHandler.blocking(
                  entry -> {
                    handled.add(entry.id());
                    return Disposition.acknowledge();
                  }),
              SchedulePoller.Settings.defaults().withMaxIdleSleep(Duration.ofMillis(500)))) {
        poller.start();
        schedule.schedule("first", ScheduleProbe.serverTime(schedule).minusMillis(1));
        await().atMost(Duration.ofSeconds(5)).until(() -> handled.contains("first"));

        redis.kill();
        long claimsBefore = poller.stats().claims();
        redis.restart();
        await()
            .atMost(Duration.ofSeconds(10))
            .ignoreException(ScheduleUnavailableException.class)
            .until(
                () -> {
                  schedule.schedule("second", ScheduleProbe.serverTime(schedule).plusMillis(50));
                  return true;
                });
        await().atMost(Duration.ofSeconds(10)).until(() -> handled.contains("second"));
        assertThat(poller.isRunning()).isTrue();
        assertThat(poller.stats().claims()).isGreaterThan(claimsBefore);
      }
    }
  }

  @Test
  void theWakeupSubscriptionSurvivesARedisRestart() {
    try (RedisProcess redis = RedisProcess.start();
        RedisSchedule schedule =
            new RedisSchedule(connect(redis.uri(), Optional.empty()), "resub", 1);
        RedisSchedule otherProcess =
            new RedisSchedule(connect(redis.uri(), Optional.empty()), "resub", 1)) {
      List<String> handled = new CopyOnWriteArrayList<>();
      try (SchedulePoller poller =
          new SchedulePoller(
              schedule,
              DueEntryHandler.blocking(
                  entry -> {
                    handled.add(entry.id());
                    return Disposition.acknowledge();
                  }),
              SchedulePoller.Settings.defaults().withMaxIdleSleep(Duration.ofMinutes(1)))) {
        poller.start();
        await().atMost(Duration.ofSeconds(5)).until(() -> poller.stats().claims() >= 1);
        redis.restart();
        // The poller sleeps (idle cap 1 min) through the restart; only the re-made subscription can
        // wake it.
        Instant[] due = new Instant[1];
        await()
            .atMost(Duration.ofSeconds(10))
            .ignoreException(ScheduleUnavailableException.class)
            .until(
                () -> {
                  due[0] = ScheduleProbe.serverTime(otherProcess).plusMillis(300);
                  otherProcess.schedule("after-restart", due[0]);
                  return true;
                });
        await().atMost(Duration.ofSeconds(10)).until(() -> handled.contains("after-restart"));
        assertThat(poller.stats().claims()).isLessThan(10);
      }
    }
  }

  @Test
  void aFrozenRedisTimesOutWithAClearErrorAndAnswersAgainWhenItResumes() {
    try (RedisProcess redis = RedisProcess.start();
        RedisSchedule schedule =
            new RedisSchedule(connect(redis.uri(), Optional.empty()), "frozen", 1)) {
      schedule.schedule("x", ScheduleProbe.serverTime(schedule).plusSeconds(60));
      redis.signal("STOP");
      try {
        assertThatThrownBy(() -> schedule.claimDue(10, Duration.ofMinutes(1)))
            .isInstanceOf(ScheduleUnavailableException.class)
            .hasMessageContaining("Redis at " + redis.uri());
      } finally {
        redis.signal("CONT");
      }
      await()
          .atMost(Duration.ofSeconds(10))
          .ignoreException(ScheduleUnavailableException.class)
          .until(() -> schedule.waitingEntries().containsKey("x"));
    }
  }

  @Test
  void authenticationWithThePasswordFromTheConfigurationOverridesTheUri() {
    try (RedisProcess redis = RedisProcess.start("--requirepass", "s3cret-pass")) {
      String uriWithStalePassword = "redis://:old-pass@127.0.0.1:" + redis.port();
      OperatorConfig config =
          OperatorConfig.fromEnv(
              Map.of(
                  OperatorConfig.REDIS_URI, uriWithStalePassword,
                  OperatorConfig.REDIS_PASSWORD, "s3cret-pass",
                  OperatorConfig.KEY_PREFIX, "auth"));
      try (RedisSchedule schedule = RedisSchedule.open(config)) {
        Instant due =
            ScheduleProbe.serverTime(schedule).truncatedTo(ChronoUnit.MILLIS).plusSeconds(60);
        schedule.schedule("secured", due);
        assertThat(schedule.waitingEntries()).containsExactly(Map.entry("secured", due));
      }
    }
  }

  @Test
  void aWrongPasswordGivesAClearErrorThatDoesNotShowThePassword() {
    try (RedisProcess redis = RedisProcess.start("--requirepass", "s3cret-pass")) {
      try (RedisSchedule wrong =
          new RedisSchedule(
              connect("redis://:not-the-pass@127.0.0.1:" + redis.port(), Optional.empty()),
              "auth",
              1)) {
        assertThatThrownBy(() -> wrong.schedule("x", Instant.now()))
            .isInstanceOf(ScheduleUnavailableException.class)
            .hasMessageContaining("refused authentication")
            .hasMessageContaining(OperatorConfig.REDIS_PASSWORD)
            .hasMessageContaining("redis://***@127.0.0.1:" + redis.port())
            .message()
            .doesNotContain("not-the-pass");
      }
      try (RedisSchedule none =
          new RedisSchedule(connect(redis.uri(), Optional.empty()), "auth", 1)) {
        assertThatThrownBy(() -> none.schedule("x", Instant.now()))
            .isInstanceOf(ScheduleUnavailableException.class)
            .hasMessageContaining("refused authentication");
      }
    }
  }

  /**
   * Lettuce sometimes reports a refused handshake as "Connection closed prematurely" (about once in
   * 60 connects on a busy machine), which would tell the user Redis is down when the password is
   * wrong; every one of many connects must name the password.
   */
  @Test
  void aWrongPasswordIsReportedAsSuchOnEveryConnectNotAsAnOutage() {
    try (RedisProcess redis = RedisProcess.start("--requirepass", "s3cret-pass")) {
      Map<String, Integer> messages = new TreeMap<>();
      for (int connect = 0; connect < 400; connect++) {
        try (RedisSchedule wrong =
            new RedisSchedule(
                connect("redis://:not-the-pass@127.0.0.1:" + redis.port(), Optional.empty()),
                "auth",
                1)) {
          Throwable refused = catchThrowable(() -> wrong.schedule("x", Instant.now()));
          assertThat(refused).isInstanceOf(ScheduleUnavailableException.class);
          String kind =
              refused.getMessage().contains("refused authentication")
                  ? "refused authentication"
                  : refused.getMessage();
          messages.merge(kind, 1, Integer::sum);
        }
      }
      assertThat(messages).containsOnlyKeys("refused authentication");
    }
  }

  private static RedisConnections connect(String uri, Optional<String> password) {
    return RedisConnections.standalone(uri, password, TIMEOUT);
  }
}
