package io.delayedtask.operator.it;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import ch.qos.logback.classic.Level;
import ch.qos.logback.classic.Logger;
import ch.qos.logback.classic.LoggerContext;
import ch.qos.logback.classic.spi.ILoggingEvent;
import ch.qos.logback.classic.spi.ThrowableProxyUtil;
import ch.qos.logback.core.read.ListAppender;
import io.delayedtask.operator.DelayedTaskOperator;
import io.delayedtask.operator.config.OperatorConfig;
import io.delayedtask.operator.testing.MockApiServer;
import io.delayedtask.operator.testing.OperatorFixture;
import io.delayedtask.operator.testing.OperatorHttp;
import io.delayedtask.operator.testing.RedisProcess;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;
import org.slf4j.LoggerFactory;

/**
 * What the operator logs about Redis, from its own log events (the operator in-process on the mock
 * API server, a real Redis that asks for a password): the cause of an outage once per change of
 * state, not once per probe, and the password in no line at any level, not even the Redis client's
 * debug lines, whether Redis is up, gone, or refusing the password.
 */
class RedisLogsIT {
  private static final String PASSWORD = "pw-7f3c9e51-never-logged";
  private static final Duration TIMEOUT = Duration.ofSeconds(60);
  private static final String UNREACHABLE = "Redis is unreachable";
  private static final String REACHABLE = "Redis is reachable";

  @Test
  void theCauseIsLoggedOncePerChangeOfStateAndThePasswordNever() {
    LoggerContext logs = (LoggerContext) LoggerFactory.getILoggerFactory();
    ListAppender<ILoggingEvent> captured = new ListAppender<>();
    captured.setContext(logs);
    captured.start();
    Logger root = logs.getLogger(org.slf4j.Logger.ROOT_LOGGER_NAME);
    Logger lettuce = logs.getLogger("io.lettuce");
    Logger operatorLogs = logs.getLogger("io.delayedtask");
    Level lettuceLevel = lettuce.getLevel();
    Level operatorLevel = operatorLogs.getLevel();
    root.addAppender(captured);
    lettuce.setLevel(Level.DEBUG);
    operatorLogs.setLevel(Level.DEBUG);
    try (MockApiServer api = MockApiServer.start(); RedisProcess redis = RedisProcess.start("--requirepass", PASSWORD)) {
      Map<String, String> env = OperatorFixture.env(redis, "logs", "op-logs");
      env.put(OperatorConfig.REDIS_PASSWORD, PASSWORD);
      env.put(OperatorConfig.NAMESPACES, "logs");
      env.put(OperatorConfig.LEASE_NAMESPACE, "logs");
      try (DelayedTaskOperator operator = OperatorFixture.start(env, api.newClient())) {
        await("the operator leads").atMost(TIMEOUT).until(operator::isFiring);
        await("ready").atMost(TIMEOUT).until(() -> readyz(operator) == 200);

        for (int outage = 1; outage <= 2; outage++) {
          redis.kill();
          await("not ready").atMost(TIMEOUT).until(() -> readyz(operator) == 503);
          int down = outage;
          // Probed every 250 ms: many failed probes, one line.
          await("probes go on failing").during(Duration.ofSeconds(2)).atMost(Duration.ofSeconds(10))
              .until(() -> readyz(operator) == 503);
          assertThat(count(captured, UNREACHABLE)).as("outage %d: unreachable lines", down).isEqualTo(down);
          redis.restart();
          await("ready again").atMost(TIMEOUT).until(() -> readyz(operator) == 200);
          await("reachable logged").atMost(TIMEOUT).until(() -> count(captured, REACHABLE) == down + 1);
        }
        assertThat(count(captured, UNREACHABLE)).isEqualTo(2);
      }

      // A wrong password: refused by Redis, and not logged either.
      Map<String, String> wrong = OperatorFixture.env(redis, "logs-wrong", "op-logs-wrong");
      String wrongPassword = "pw-0a1b2c3d-wrong-never-logged";
      wrong.put(OperatorConfig.REDIS_PASSWORD, wrongPassword);
      wrong.put(OperatorConfig.NAMESPACES, "logs-wrong");
      wrong.put(OperatorConfig.LEASE_NAMESPACE, "logs-wrong");
      try (DelayedTaskOperator refused = OperatorFixture.start(wrong, api.newClient())) {
        await("the refusal is logged").atMost(TIMEOUT).until(() -> count(captured, UNREACHABLE) == 3);
        assertThat(lines(captured)).as("every line, with its stack trace").noneMatch(line -> line.contains(wrongPassword));
      }
    } finally {
      root.detachAppender(captured);
      lettuce.setLevel(lettuceLevel);
      operatorLogs.setLevel(operatorLevel);
    }
    assertThat(lines(captured)).as("lines captured").hasSizeGreaterThan(10);
    assertThat(lines(captured)).as("every line, with its stack trace").noneMatch(line -> line.contains(PASSWORD));
  }

  private static int readyz(DelayedTaskOperator operator) {
    return OperatorHttp.get(operator.httpPort(), "/readyz").statusCode();
  }

  private static long count(ListAppender<ILoggingEvent> captured, String start) {
    return events(captured).stream().filter(e -> e.getFormattedMessage().startsWith(start)).count();
  }

  private static List<ILoggingEvent> events(ListAppender<ILoggingEvent> captured) {
    synchronized (captured) { // the appender's own lock: doAppend is synchronized
      return List.copyOf(captured.list);
    }
  }

  private static List<String> lines(ListAppender<ILoggingEvent> captured) {
    return events(captured).stream().map(e -> e.getFormattedMessage()
        + (e.getThrowableProxy() == null ? "" : ThrowableProxyUtil.asString(e.getThrowableProxy()))).toList();
  }
}
