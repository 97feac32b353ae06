package io.delayedtask.operator.it;

import static io.delayedtask.operator.testing.Tasks.create;
import static io.delayedtask.operator.testing.Tasks.get;
import static io.delayedtask.operator.testing.Tasks.phase;
import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import io.delayedtask.operator.DelayedTaskOperator;
import io.delayedtask.operator.api.v1alpha1.Phase;
import io.delayedtask.operator.config.OperatorConfig;
import io.delayedtask.operator.testing.OperatorFixture;
import io.delayedtask.operator.testing.RealKubernetes;
import io.delayedtask.operator.testing.RedisProcess;
import io.delayedtask.operator.testing.RequiresRealKubernetes;
import io.delayedtask.operator.testing.Tasks;
import io.lettuce.core.RedisClient;
import io.lettuce.core.api.StatefulRedisConnection;
import java.time.Duration;
import java.time.Instant;
import java.util.HashMap;
import java.util.Map;
import org.junit.jupiter.api.Test;

/**
 * No finalizer (docs/reference.md): with the operator stopped, deleting a task returns at once and
 * deleting its namespace completes; started again, the operator drops the entries those tasks left
 * in Redis and fires nothing for them. On the real API server, with its namespace controller.
 */
@RequiresRealKubernetes
class NoFinalizerIT {
  private static final Duration TIMEOUT = Duration.ofSeconds(60);

  @Test
  void aStoppedOperatorStrandsNoTaskAndNoNamespaceAndItsOrphanEntriesGoWhenItIsBack() {
    RealKubernetes kube = RealKubernetes.shared();
    kube.controllerManager(); // the namespace controller: deleting a namespace completes
    String kept = kube.createNamespace("no-finalizer");
    String doomed = kube.createNamespace("no-finalizer-gone");
    try (RedisProcess redis = RedisProcess.start();
        RedisClient redisClient = RedisClient.create(redis.uri());
        StatefulRedisConnection<String, String> redisConnection = redisClient.connect()) {
      Map<String, String> env = new HashMap<>(OperatorFixture.env(redis, "nofin", "op-nofin"));
      env.put(OperatorConfig.NAMESPACES, kept + "," + doomed);
      env.put(OperatorConfig.LEASE_NAMESPACE, kept);
      Instant due = Instant.now().plusSeconds(8);
      DelayedTaskOperator first = OperatorFixture.start(env, kube.newClient());
      try {
        await().atMost(TIMEOUT).until(first::isFiring);
        create(kube.client(), Tasks.withJob(kept, "deleted-while-stopped", due));
        create(kube.client(), Tasks.withJob(doomed, "in-deleted-namespace", due));
        await()
            .atMost(TIMEOUT)
            .until(
                () ->
                    phase(kube.client(), kept, "deleted-while-stopped").orElse(null)
                            == Phase.Scheduled
                        && phase(kube.client(), doomed, "in-deleted-namespace").orElse(null)
                            == Phase.Scheduled);
        assertThat(get(kube.client(), kept, "deleted-while-stopped").getMetadata().getFinalizers())
            .isEmpty();
      } finally {
        first.close();
      }
      String dueKey = "nofin:{0}:due";
      assertThat(redisConnection.sync().zcard(dueKey))
          .as("both entries wait in Redis")
          .isEqualTo(2);

      long started = System.nanoTime();
      RealKubernetes.Kubectl.Result deleted =
          kube.kubectl("delete", "dt", "deleted-while-stopped", "-n", kept, "--timeout=20s");
      assertThat(deleted.ok()).as(deleted.output()).isTrue();
      assertThat(Duration.ofNanos(System.nanoTime() - started))
          .as("the delete waits for no operator")
          .isLessThan(Duration.ofSeconds(15));
      RealKubernetes.Kubectl.Result namespaceDeleted =
          kube.kubectl("delete", "namespace", doomed, "--timeout=60s");
      assertThat(namespaceDeleted.ok()).as(namespaceDeleted.output()).isTrue();
      assertThat(kube.client().namespaces().withName(doomed).get())
          .as("the namespace is gone")
          .isNull();

      // Both entries fall due while no operator runs; the next one drops them and fires nothing.
      await().atMost(TIMEOUT).until(() -> Instant.now().isAfter(due.plusSeconds(1)));
      DelayedTaskOperator second = OperatorFixture.start(env, kube.newClient());
      try {
        await().atMost(TIMEOUT).until(second::isFiring);
        await("the orphan entries are dropped")
            .atMost(TIMEOUT)
            .until(
                () ->
                    redisConnection.sync().zcard(dueKey) == 0
                        && redisConnection.sync().zcard("nofin:{0}:inflight") == 0);
        assertThat(kube.client().batch().v1().jobs().inNamespace(kept).list().getItems())
            .as("nothing fired for a deleted task")
            .isEmpty();
      } finally {
        second.close();
      }
    }
  }
}
