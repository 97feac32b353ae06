package io.delayedtask.operator.faults;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import io.delayedtask.operator.testing.FiringInvariants;
import io.delayedtask.operator.testing.OperatorProcess;
import io.delayedtask.operator.testing.RequiresLoopbackOnlyNetwork;
import io.delayedtask.operator.testing.RequiresRealKubernetes;
import io.delayedtask.operator.testing.Tasks;
import io.lettuce.core.RedisClient;
import io.lettuce.core.api.StatefulRedisConnection;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;

/**
 * Redis is an index rebuilt from the DelayedTasks: losing its data or its connection must never
 * lose a task. One operator (leader election on) against a Redis that dies, is emptied, or is cut
 * off mid-flight. No API fault is injected, so the API server is the real one.
 */
@RequiresRealKubernetes
@ExtendWith(FaultLabExtension.class)
@RequiresLoopbackOnlyNetwork
class RedisFaultIT {
  private static final Duration FIRE_TIMEOUT = Duration.ofSeconds(90);
  private static final String RESYNC_ADDED = "delayedtask_resync_repairs_total";
  private static final String ADDED = "kind=\"added\"";

  @Test
  void everyTaskFiresAfterRedisIsKilledAndRestartsEmpty(FaultLab lab) {
    lab.startOperator("op-a");
    lab.awaitLiveLeader(Duration.ofSeconds(60));
    Instant start = Instant.now().plusSeconds(10);
    List<String> names =
        new ArrayList<>(lab.createTasks("restart-job", 10, i -> start.plusMillis(500L * i), true));
    names.addAll(
        lab.createTasks("restart-status", 10, i -> start.plusMillis(250L + 500L * i), false));
    lab.awaitScheduled(names, Duration.ofSeconds(60));

    lab.redis.kill();
    // Written while Redis is down: the reconciler must keep them until it can schedule them.
    names.addAll(lab.createTasks("while-down", 5, i -> start.plusSeconds(2), false));
    lab.redis.restart();

    lab.awaitAllFiredOnceNotEarly(names, FIRE_TIMEOUT);
  }

  @Test
  void everyTaskFiresAfterFlushAll(FaultLab lab) {
    OperatorProcess operator = lab.startOperator("op-a");
    lab.awaitLiveLeader(Duration.ofSeconds(60));
    // Due in an hour, so however slow the machine, nothing falls due before the entries are back,
    // and only the periodic resync (5 s here) can put them back, since a FLUSHALL leaves the
    // server's run_id unchanged.
    Instant start = Instant.now().plusSeconds(3600);
    List<String> names =
        new ArrayList<>(lab.createTasks("flush-job", 10, i -> start.plusMillis(300L * i), true));
    names.addAll(
        lab.createTasks("flush-status", 10, i -> start.plusMillis(150L + 300L * i), false));
    lab.awaitScheduled(names, Duration.ofSeconds(60));
    await()
        .atMost(Duration.ofSeconds(10))
        .until(() -> lab.scheduleSnapshot().waiting().containsAll(names));
    double addedBefore = operator.metric(RESYNC_ADDED, ADDED);

    RedisClient client = RedisClient.create(lab.redis.uri());
    try (StatefulRedisConnection<String, String> connection = client.connect()) {
      connection.sync().flushall();
    } finally {
      client.shutdown();
    }

    // The entries come back before they fall due, and the resync is what brought them: its repair
    // counter grew by every one of them (were anything else writing them again, it would find less
    // to repair).
    await("the entries are back")
        .atMost(Duration.ofSeconds(60))
        .pollInterval(Duration.ofMillis(200))
        .until(() -> lab.scheduleSnapshot().waiting().containsAll(names));
    await("the resync counted its repairs")
        .atMost(Duration.ofSeconds(5))
        .untilAsserted(
            () ->
                assertThat(operator.metric(RESYNC_ADDED, ADDED) - addedBefore)
                    .isGreaterThanOrEqualTo(names.size()));
    assertThat(FiringInvariants.notFiredYet(lab.client(), lab.namespace, names))
        .containsExactlyElementsOf(names);

    // And the restored schedule fires: the tasks brought forward to a few seconds from now.
    Instant soon = Instant.now().plusSeconds(3);
    names.forEach(
        name ->
            Tasks.editSpec(
                lab.client(), lab.namespace, name, spec -> spec.setRunAt(Tasks.rfc3339(soon))));
    lab.awaitAllFiredOnceNotEarly(names, FIRE_TIMEOUT);
  }

  @Test
  void everyTaskFiresWhileTheRedisConnectionIsCutAgainAndAgain(FaultLab lab) {
    lab.startOperator("op-a");
    lab.awaitLiveLeader(Duration.ofSeconds(60));
    Instant start = Instant.now().plusSeconds(8);
    List<String> names =
        new ArrayList<>(lab.createTasks("cut-job", 15, i -> start.plusMillis(400L * i), true));
    names.addAll(lab.createTasks("cut-status", 15, i -> start.plusMillis(200L + 400L * i), false));
    lab.awaitScheduled(names, Duration.ofSeconds(60));

    // While they fall due: cut every connection each 700 ms, and refuse new ones for 3 s once.
    Instant end = start.plusSeconds(7);
    int cuts = 0;
    while (Instant.now().isBefore(end)) {
      FaultLab.awaitInstant(Instant.now().plusMillis(700));
      lab.redisProxy.dropConnections();
      if (++cuts == 4) {
        lab.redisProxy.setAccepting(false);
        FaultLab.awaitInstant(Instant.now().plusSeconds(3));
        lab.redisProxy.setAccepting(true);
      }
    }

    lab.awaitAllFiredOnceNotEarly(names, FIRE_TIMEOUT);
  }
}
