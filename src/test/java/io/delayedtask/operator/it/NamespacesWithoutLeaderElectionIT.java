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
import io.delayedtask.operator.testing.OperatorFixture;
import io.delayedtask.operator.testing.RealKubernetes;
import io.delayedtask.operator.testing.RedisProcess;
import io.delayedtask.operator.testing.RequiresRealKubernetes;
import io.fabric8.kubernetes.client.KubernetesClient;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;

/**
 * DELAYEDTASK_LEADER_ELECTION=false fires without a Lease; DELAYEDTASK_NAMESPACES limits what is
 * watched. On a real API server, where namespaced informers are namespaced list/watch requests.
 */
@RequiresRealKubernetes
class NamespacesWithoutLeaderElectionIT {
  private static final Duration TIMEOUT = Duration.ofSeconds(20);

  @Test
  void firesOnlyInTheWatchedNamespacesWithoutALease() {
    RealKubernetes kube = RealKubernetes.shared();
    String teamA = kube.createNamespace("team-a");
    String teamB = kube.createNamespace("team-b");
    String teamC = kube.createNamespace("team-c");
    try (RedisProcess redis = RedisProcess.start(); KubernetesClient operatorClient = kube.newClient()) {
      Map<String, String> env = OperatorFixture.env(redis, "namespaces", "solo");
      env.put(OperatorConfig.LEADER_ELECTION, "false");
      env.put(OperatorConfig.NAMESPACES, teamA + "," + teamB);
      env.put(OperatorConfig.LEASE_NAMESPACE, teamA); // where a Lease would be, were there one
      KubernetesClient client = kube.client();
      try (DelayedTaskOperator operator = OperatorFixture.start(env, operatorClient)) {
        await("fires without a Lease once started").atMost(TIMEOUT).until(operator::isFiring);
        create(client, task(teamA, "watched", s -> s.setDelay("500ms")));
        create(client, task(teamB, "also-watched", s -> s.setDelay("500ms")));
        create(client, task(teamC, "ignored", s -> s.setDelay("500ms")));

        await().atMost(TIMEOUT).until(() -> phase(client, teamA, "watched").orElse(null) == Phase.Fired);
        await().atMost(TIMEOUT).until(() -> phase(client, teamB, "also-watched").orElse(null) == Phase.Fired);
        await().during(Duration.ofSeconds(2)).atMost(Duration.ofSeconds(5))
            .until(() -> get(client, teamC, "ignored").getStatus() == null);
        for (String ns : List.of(teamA, teamB, teamC, "default")) {
          assertThat(client.leases().inNamespace(ns).list().getItems()).as("Leases in %s", ns).isEmpty();
        }
      }
    }
  }
}
