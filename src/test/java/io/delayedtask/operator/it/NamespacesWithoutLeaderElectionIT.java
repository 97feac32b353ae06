package io.delayedtask.operator.it;

import static io.delayedtask.operator.testing.Tasks.create;
import static io.delayedtask.operator.testing.Tasks.get;
import static io.delayedtask.operator.testing.Tasks.phase;
import static io.delayedtask.operator.testing.Tasks.task;
import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import io.delayedtask.operator.DelayedTaskOperator;
import io.delayedtask.operator.api.v1alpha1.Phase;
import io.delayedtask.operator.config.OperatorConfig;
import io.delayedtask.operator.testing.MockKubernetes;
import io.delayedtask.operator.testing.OperatorFixture;
import io.delayedtask.operator.testing.RedisProcess;
import io.fabric8.kubernetes.client.KubernetesClient;
import java.time.Duration;
import java.util.Map;
import org.junit.jupiter.api.Test;

/** DELAYEDTASK_LEADER_ELECTION=false fires without a Lease; DELAYEDTASK_NAMESPACES limits what is watched. */
class NamespacesWithoutLeaderElectionIT {
  private static final Duration TIMEOUT = Duration.ofSeconds(20);

  @Test
  void firesOnlyInTheWatchedNamespacesWithoutALease() {
    try (RedisProcess redis = RedisProcess.start(); MockKubernetes kube = MockKubernetes.start();
        KubernetesClient operatorClient = kube.newClient()) {
      Map<String, String> env = OperatorFixture.env(redis, "namespaces", "solo");
      env.put(OperatorConfig.LEADER_ELECTION, "false");
      env.put(OperatorConfig.NAMESPACES, "team-a,team-b");
      KubernetesClient client = kube.client();
      try (DelayedTaskOperator operator = OperatorFixture.start(env, operatorClient)) {
        assertThat(operator.isFiring()).isTrue();
        create(client, task("team-a", "watched", s -> s.setDelay("500ms")));
        create(client, task("team-b", "also-watched", s -> s.setDelay("500ms")));
        create(client, task("team-c", "ignored", s -> s.setDelay("500ms")));

        await().atMost(TIMEOUT).until(() -> phase(client, "team-a", "watched").orElse(null) == Phase.Fired);
        await().atMost(TIMEOUT).until(() -> phase(client, "team-b", "also-watched").orElse(null) == Phase.Fired);
        await().during(Duration.ofSeconds(2)).atMost(Duration.ofSeconds(5))
            .until(() -> get(client, "team-c", "ignored").getStatus() == null);
        assertThat(client.leases().inAnyNamespace().list().getItems()).isEmpty();
      }
    }
  }
}
