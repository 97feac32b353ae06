package io.delayedtask.operator.leader;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import io.delayedtask.operator.DelayedTaskOperator;
import io.delayedtask.operator.config.OperatorConfig;
import io.delayedtask.operator.testing.ApiFault;
import io.delayedtask.operator.testing.MockApiServer;
import io.delayedtask.operator.testing.OperatorFixture;
import io.delayedtask.operator.testing.RedisProcess;
import io.delayedtask.operator.testing.Tasks;
import io.lettuce.core.RedisClient;
import io.lettuce.core.ScoredValue;
import io.lettuce.core.api.StatefulRedisConnection;
import java.time.Duration;
import java.time.Instant;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;

/**
 * DELAYEDTASK_CLAIM_LEASE_SECONDS reaches the running poller: a claim in flight holds exactly that
 * lease in Redis. The firing's status write is held by the mock API server, so the claim stays in
 * flight long enough to be read (a sink delivery hands its claim back at once, so it cannot show
 * this).
 */
class ClaimLeaseIT {
  /** Not the 60 s default. */
  private static final Duration CLAIM_LEASE = Duration.ofSeconds(45);

  @Test
  void aClaimInFlightHoldsTheConfiguredLease() {
    try (MockApiServer api = MockApiServer.start();
        RedisProcess redis = RedisProcess.start()) {
      // The firing's write (and only it) waits 10 s, then conflicts: meanwhile the claim is in
      // flight.
      ApiFault held =
          api.inject(
              ApiFault.of("PUT", ".*/delayedtasks/held/status", 409, 1)
                  .whenBodyContains("\"phase\":\"Fired\"")
                  .delayed(Duration.ofSeconds(10)));
      try (DelayedTaskOperator operator =
          OperatorFixture.startLeading(
              api.newClient(),
              redis,
              "lease",
              "lease",
              Map.of(OperatorConfig.CLAIM_LEASE_SECONDS, Long.toString(CLAIM_LEASE.toSeconds())))) {
        Tasks.create(api.client(), Tasks.statusOnly("lease", "held", Instant.now().plusSeconds(1)));
        await("the firing's write is held")
            .atMost(Duration.ofSeconds(60))
            .until(() -> held.hits() > 0);

        RedisClient lettuce = RedisClient.create(redis.uri());
        try (StatefulRedisConnection<String, String> connection = lettuce.connect()) {
          List<ScoredValue<String>> inFlight =
              connection.sync().zrangeWithScores("lease:{0}:inflight", 0, -1);
          List<String> time = connection.sync().time();
          long now = Long.parseLong(time.get(0)) * 1000 + Long.parseLong(time.get(1)) / 1000;
          assertThat(inFlight).as("the claim in flight while its write is held").hasSize(1);
          // Claimed at most 15 s ago (room for a slow machine): the 60 s default would leave more
          // than 45 s.
          assertThat((long) inFlight.get(0).getScore() - now)
              .as("ms left of the claim's lease")
              .isBetween(30_000L, CLAIM_LEASE.toMillis());
        } finally {
          lettuce.shutdown();
        }
      }
    }
  }
}
