package io.delayedtask.operator.schedule;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import io.delayedtask.operator.config.OperatorConfig;
import io.delayedtask.operator.testing.Ports;
import io.delayedtask.operator.testing.RedisProcess;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.time.Instant;
import java.time.temporal.ChronoUnit;
import java.util.Map;
import org.junit.jupiter.api.Test;

/** The schedule through Sentinel ({@code redis-sentinel://host:port#master}), master with AUTH. */
class RedisScheduleSentinelIT {

  @Test
  void scheduleThroughSentinel() throws Exception {
    try (RedisProcess master = RedisProcess.start("--requirepass", "sentinel-pass")) {
      int sentinelPort = Ports.freePort();
      Path dir = Files.createTempDirectory("sentinel-");
      Path conf = dir.resolve("sentinel.conf");
      Files.writeString(
          conf,
          String.join(
              "\n",
              "port " + sentinelPort,
              "bind 127.0.0.1",
              "dir " + dir,
              "sentinel monitor mymaster 127.0.0.1 " + master.port() + " 1",
              "sentinel auth-pass mymaster sentinel-pass",
              ""));
      Process sentinel =
          new ProcessBuilder(RedisProcess.binary().getAbsolutePath(), conf.toString(), "--sentinel")
              .redirectErrorStream(true)
              .redirectOutput(dir.resolve("sentinel.log").toFile())
              .start();
      try {
        await("sentinel on port " + sentinelPort)
            .atMost(Duration.ofSeconds(20))
            .until(() -> RedisProcess.accepts(sentinelPort));
        OperatorConfig config =
            OperatorConfig.fromEnv(
                Map.of(
                    OperatorConfig.REDIS_URI,
                        "redis-sentinel://127.0.0.1:" + sentinelPort + "#mymaster",
                    OperatorConfig.REDIS_PASSWORD, "sentinel-pass",
                    OperatorConfig.KEY_PREFIX, "sentinel"));
        try (RedisSchedule schedule = RedisSchedule.open(config)) {
          Instant due =
              ScheduleProbe.serverTime(schedule).truncatedTo(ChronoUnit.MILLIS).minusSeconds(1);
          schedule.schedule("via-sentinel", due);
          assertThat(schedule.claimDue(10, Duration.ofMinutes(1)).entries())
              .extracting(ClaimedEntry::id)
              .containsExactly("via-sentinel");
          assertThat(schedule.serverIdentity()).isNotBlank();
        }
      } finally {
        sentinel.destroyForcibly();
        sentinel.waitFor();
      }
    }
  }
}
