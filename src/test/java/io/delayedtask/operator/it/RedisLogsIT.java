package io.delayedtask.operator.it;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import io.delayedtask.operator.DelayedTaskOperator;
import io.delayedtask.operator.config.OperatorConfig;
import io.delayedtask.operator.testing.LogCapture;
import io.delayedtask.operator.testing.MockApiServer;
import io.delayedtask.operator.testing.OperatorFixture;
import io.delayedtask.operator.testing.OperatorHttp;
import io.delayedtask.operator.testing.RedisProcess;
import java.time.Duration;
import java.util.Map;
import org.junit.jupiter.api.Test;

/**
 * What the operator logs about Redis, from its own log events (the operator in-process on the mock
 * API server, a real Redis that asks for a password): the cause of an outage once per change of
 * state, not once per probe, and the password in no line at any level, not even the Redis client's
 * debug lines, whether Redis is up, gone, or refusing the password.
 */
class RedisLogsIT {
  private static final String PASSWORD = "pw-7f3c9e51-never-logged";
  private static final String WRONG_PASSWORD = "pw-0a1b2c3d-wrong-never-logged";
  private static final Duration TIMEOUT = Duration.ofSeconds(60);
  private static final String UNREACHABLE = "Redis is unreachable";
  private static final String REACHABLE = "Redis is reachable";

  @Test
  void theCauseIsLoggedOncePerChangeOfStateAndThePasswordNever() {
    try (LogCapture captured = LogCapture.start();
        MockApiServer api = MockApiServer.start();
        RedisProcess redis = RedisProcess.start("--requirepass", PASSWORD)) {
      try (DelayedTaskOperator operator =
          OperatorFixture.startLeading(
              api.newClient(),
              redis,
              "logs",
              "logs",
              Map.of(OperatorConfig.REDIS_PASSWORD, PASSWORD))) {
        await("ready").atMost(TIMEOUT).until(() -> readyz(operator) == 200);

        for (int outage = 1; outage <= 2; outage++) {
          redis.kill();
          await("not ready").atMost(TIMEOUT).until(() -> readyz(operator) == 503);
          int down = outage;
          // Probed every 250 ms: many failed probes, one line.
          await("probes go on failing")
              .during(Duration.ofSeconds(2))
              .atMost(Duration.ofSeconds(10))
              .until(() -> readyz(operator) == 503);
          assertThat(captured.count(UNREACHABLE))
              .as("outage %d: unreachable lines", down)
              .isEqualTo(down);
          redis.restart();
          await("ready again").atMost(TIMEOUT).until(() -> readyz(operator) == 200);
          await("reachable logged")
              .atMost(TIMEOUT)
              .until(() -> captured.count(REACHABLE) == down + 1);
        }
        assertThat(captured.count(UNREACHABLE)).isEqualTo(2);
      }

      // A wrong password: refused by Redis, and not logged either. Started by hand, not by
      // OperatorFixture.startLeading: what is awaited is the refusal, not that it leads.
      Map<String, String> wrong = OperatorFixture.env(redis, "logs-wrong", "op-logs-wrong");
      wrong.put(OperatorConfig.REDIS_PASSWORD, WRONG_PASSWORD);
      wrong.put(OperatorConfig.NAMESPACES, "logs-wrong");
      wrong.put(OperatorConfig.LEASE_NAMESPACE, "logs-wrong");
      try (DelayedTaskOperator refused = OperatorFixture.start(wrong, api.newClient())) {
        // untilAsserted: a failure says how many lines there were (once seen 60 s without the
        // third).
        await("the refusal is logged")
            .atMost(TIMEOUT)
            .untilAsserted(() -> assertThat(captured.count(UNREACHABLE)).isEqualTo(3));
      }
      assertThat(captured.lines()).as("lines captured").hasSizeGreaterThan(10);
      assertThat(captured.lines())
          .as("every line, with its stack trace")
          .noneMatch(line -> line.contains(PASSWORD) || line.contains(WRONG_PASSWORD));
    }
  }

  private static int readyz(DelayedTaskOperator operator) {
    return OperatorHttp.get(operator.httpPort(), "/readyz").statusCode();
  }
}
