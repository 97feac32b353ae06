package io.delayedtask.operator.leader;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import io.delayedtask.operator.DelayedTaskOperator;
import io.delayedtask.operator.api.v1alpha1.Phase;
import io.delayedtask.operator.config.OperatorConfig;
import io.delayedtask.operator.schedule.RedisConnections;
import io.delayedtask.operator.schedule.RedisSchedule;
import io.delayedtask.operator.testing.ApiFault;
import io.delayedtask.operator.testing.MockApiServer;
import io.delayedtask.operator.testing.OperatorFixture;
import io.delayedtask.operator.testing.RedisProcess;
import io.delayedtask.operator.testing.Tasks;
import io.fabric8.kubernetes.client.KubernetesClient;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import org.junit.jupiter.api.Test;

/**
 * Overdue tasks created in the first seconds after an operator starts leading are settled at once,
 * round after round (issue 16, item 9: one run in eight once waited 8 s). Each round is a new
 * operator on the mock API server, leader election on, a key prefix of its own.
 *
 * <p>The cause was the resync that becoming leader ran in the leader-election callback, before the
 * poller started and before JOSDK (which waits for that callback) handled any event: a slow resync
 * (entries of tasks the cache lacks, each checked with a GET) delayed every firing. Each round here
 * starts with such entries, whose GETs take half a second each.
 *
 * <p>A first round, not counted, warms this JVM up: the first reconcile in a fresh JVM pays class
 * loading and JIT compilation (about 2 s on a shared 2-core machine), which is not what is
 * measured.
 */
class FirstSecondsOfLeadershipIT {
  private static final int ROUNDS = 20;

  /**
   * The promise's bound, for the median round: below the 5 s a firing takes when a new leader's
   * hold lasts through the resync's checks of the ghosts (8 s; the hold gives up after 5 s): seen
   * failing so, every round at 5.0-5.1 s, so the median too. The median, not every round: the
   * ghosts make the slow path happen in every round when it exists, and a round slowed by a GC
   * pause or a busy machine then fails nothing.
   */
  private static final Duration MEDIAN_BOUND = Duration.ofSeconds(3);

  /** No round waits for the end of the resync's checks (8 s), however busy the machine. */
  private static final Duration EVERY_ROUND_BOUND = Duration.ofSeconds(8);

  private static final Set<Phase> SETTLED = Set.of(Phase.Fired, Phase.Missed);

  /** Entries of tasks that are gone, each looked up by the resync: 16 × 0.5 s = 8 s. */
  private static final int GHOSTS = 16;

  @Test
  void overdueTasksCreatedJustAfterLeadershipStartsAreSettledLongBeforeTheResyncsChecksEnd() {
    List<Duration> took = new ArrayList<>();
    try (MockApiServer api = MockApiServer.start();
        RedisProcess redis = RedisProcess.start()) {
      KubernetesClient client = api.client();
      api.inject(
          ApiFault.of("GET", ".*/delayedtasks/ghost-.*", 404, 1_000_000)
              .delayed(Duration.ofMillis(500)));
      for (int round = -1; round < ROUNDS; round++) {
        String namespace = "round" + round;
        try (RedisSchedule schedule =
            new RedisSchedule(RedisConnections.standalone(redis.uri()), namespace, 1)) {
          for (int i = 0; i < GHOSTS; i++) {
            schedule.schedule(
                namespace + "/ghost-" + i + "/uid-" + i, Instant.now().plusSeconds(3600));
          }
        }
        Map<String, String> env = OperatorFixture.env(redis, namespace, "op" + round);
        env.put(OperatorConfig.NAMESPACES, namespace);
        env.put(OperatorConfig.LEASE_NAMESPACE, namespace);
        try (DelayedTaskOperator operator = OperatorFixture.start(env, api.newClient())) {
          await("round " + round + ": the operator leads")
              .atMost(Duration.ofSeconds(60))
              .until(operator::isFiring);
          Instant created = Instant.now();
          Tasks.create(client, Tasks.statusOnly(namespace, "late", created.minusSeconds(10)));
          Tasks.create(
              client,
              Tasks.task(
                  namespace,
                  "missed",
                  spec -> {
                    spec.setRunAt(Tasks.rfc3339(created.minus(Duration.ofMinutes(10))));
                    spec.setStartingDeadlineSeconds(60L);
                  }));
          await("round " + round + ": both settled")
              .atMost(Duration.ofSeconds(30))
              .pollInterval(Duration.ofMillis(20))
              .until(
                  () -> settled(client, namespace, "late") && settled(client, namespace, "missed"));
          if (round >= 0) {
            took.add(Duration.between(created, Instant.now()));
          }
          // Settled as each must be: a task past its starting deadline that fired is no success.
          assertThat(Tasks.phase(client, namespace, "late"))
              .as("round %d: late", round)
              .contains(Phase.Fired);
          assertThat(Tasks.phase(client, namespace, "missed"))
              .as("round %d: missed", round)
              .contains(Phase.Missed);
        }
      }
    }
    List<Duration> sorted = took.stream().sorted().toList();
    assertThat(sorted.get(sorted.size() / 2))
        .as("the median from creation to Fired/Missed, of %s", took)
        .isLessThanOrEqualTo(MEDIAN_BOUND);
    assertThat(took)
        .as("from creation to Fired/Missed, per round")
        .allSatisfy(duration -> assertThat(duration).isLessThan(EVERY_ROUND_BOUND));
  }

  private static boolean settled(KubernetesClient client, String namespace, String name) {
    Optional<Phase> phase = Tasks.phase(client, namespace, name);
    return phase.filter(SETTLED::contains).isPresent();
  }
}
