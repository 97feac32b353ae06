package io.delayedtask.operator.it;

import static io.delayedtask.operator.testing.Tasks.create;
import static io.delayedtask.operator.testing.Tasks.get;
import static io.delayedtask.operator.testing.Tasks.phase;
import static io.delayedtask.operator.testing.Tasks.task;
import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import io.delayedtask.operator.DelayedTaskOperator;
import io.delayedtask.operator.api.v1alpha1.DelayedTask;
import io.delayedtask.operator.api.v1alpha1.Phase;
import io.delayedtask.operator.leader.ScheduleIds;
import io.delayedtask.operator.testing.OperatorFixture;
import io.delayedtask.operator.testing.OperatorFixture.OnRealKubernetes;
import io.delayedtask.operator.testing.OperatorHttp;
import io.delayedtask.operator.testing.RealKubernetes;
import io.delayedtask.operator.testing.RedisProcess;
import io.delayedtask.operator.testing.RequiresRealKubernetes;
import io.fabric8.kubernetes.client.KubernetesClient;
import io.lettuce.core.RedisClient;
import io.lettuce.core.api.StatefulRedisConnection;
import java.time.Duration;
import java.time.Instant;
import java.util.Map;
import org.junit.jupiter.api.Test;

/**
 * Redis is an index: while it is down the operator is not ready and still accepts new tasks and
 * deletions; when it comes back empty, the schedule is rebuilt from the tasks and nothing is lost:
 * a task scheduled before the outage fires after it, a task created during it fires, and a task
 * deleted during it never fires. Against a real API server, whose watches bring every change.
 */
@RequiresRealKubernetes
class RedisOutageIT {
  private static final Duration TIMEOUT = Duration.ofSeconds(30);

  @Test
  void anEmptyRedisAfterAnOutageLosesNoTask() {
    RealKubernetes kube = RealKubernetes.shared();
    // Production's 5-minute resync (OperatorFixture): what heals the schedule here is noticing
    // the restarted Redis.
    try (OnRealKubernetes world = OperatorFixture.startOnRealKubernetes(kube, "outage", Map.of())) {
      String ns = world.namespace();
      RedisProcess redis = world.redis();
      DelayedTaskOperator operator = world.operator();
      KubernetesClient client = kube.client();
      // Due after the outage on an unloaded machine, during it on a slow one: either way only the
      // rebuilt schedule can fire them, since nothing fires while Redis is down. "doomed" is due
      // with
      // "survivor", so an entry of it written back would be claimed and fired before the checks
      // below.
      Instant bothDue = Instant.now().plusSeconds(15);
      String doomedId =
          ScheduleIds.idOf(create(client, task(ns, "doomed", s -> s.setRunAt(bothDue.toString()))));
      create(client, task(ns, "survivor", s -> s.setRunAt(bothDue.toString())));
      await()
          .atMost(TIMEOUT)
          .until(
              () ->
                  phase(client, ns, "doomed").orElse(null) == Phase.Scheduled
                      && phase(client, ns, "survivor").orElse(null) == Phase.Scheduled);
      await().atMost(TIMEOUT).until(() -> readyz(operator) == 200);

      redis.kill();
      await().atMost(TIMEOUT).until(() -> readyz(operator) == 503);

      client.resource(get(client, ns, "doomed")).delete();
      // A task created during the outage is accepted and reported Scheduled from its spec.
      Instant due = Instant.now().plusSeconds(3);
      create(client, task(ns, "patient", s -> s.setRunAt(due.toString())));
      await()
          .atMost(TIMEOUT)
          .until(() -> phase(client, ns, "patient").orElse(null) == Phase.Scheduled);

      Instant restarted = Instant.now();
      redis.restart();
      await().atMost(TIMEOUT).until(() -> readyz(operator) == 200);
      for (String name : new String[] {"patient", "survivor"}) {
        await(name)
            .atMost(TIMEOUT)
            .until(() -> phase(client, ns, name).orElse(null) == Phase.Fired);
        DelayedTask fired = get(client, ns, name);
        assertThat(Instant.parse(fired.getStatus().getFiredTime()))
            .as("%s fired", name)
            .isAfterOrEqualTo(Instant.parse(fired.getStatus().getDueTime()))
            .isAfter(restarted);
      }
      await().atMost(TIMEOUT).until(() -> get(client, ns, "doomed") == null);
      assertThat(client.v1().events().inNamespace(ns).list().getItems())
          .noneMatch(
              e ->
                  "doomed".equals(e.getInvolvedObject().getName())
                      && "Fired".equals(e.getReason()));
      RedisClient lettuce = RedisClient.create(redis.uri());
      try (StatefulRedisConnection<String, String> connection = lettuce.connect()) {
        assertThat(connection.sync().zscore("outage:{0}:due", doomedId))
            .as("no entry rebuilt for the deleted task")
            .isNull();
        assertThat(connection.sync().zscore("outage:{0}:inflight", doomedId))
            .as("nor a claim of it")
            .isNull();
      } finally {
        lettuce.shutdown();
      }
    }
  }

  private static int readyz(DelayedTaskOperator operator) {
    return OperatorHttp.get(operator.httpPort(), "/readyz").statusCode();
  }
}
