package io.delayedtask.operator.it;

import static io.delayedtask.operator.testing.Tasks.create;
import static io.delayedtask.operator.testing.Tasks.get;
import static io.delayedtask.operator.testing.Tasks.phase;
import static io.delayedtask.operator.testing.Tasks.task;
import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import io.delayedtask.operator.api.v1alpha1.Phase;
import io.delayedtask.operator.config.OperatorConfig;
import io.delayedtask.operator.testing.OperatorFixture;
import io.delayedtask.operator.testing.OperatorFixture.OnRealKubernetes;
import io.delayedtask.operator.testing.RealKubernetes;
import io.delayedtask.operator.testing.RequiresRealKubernetes;
import io.fabric8.kubernetes.client.KubernetesClient;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.function.UnaryOperator;
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
    String teamB = kube.createNamespace("team-b");
    String teamC = kube.createNamespace("team-c");
    // The fixture's namespace is team A's, where a Lease would be, were there one; it returns once
    // the operator fires, here without a Lease.
    try (OnRealKubernetes world =
        OperatorFixture.startOnRealKubernetes(
            kube,
            "team-a",
            teamA ->
                Map.of(
                    OperatorConfig.LEADER_ELECTION,
                    "false",
                    OperatorConfig.NAMESPACES,
                    teamA + "," + teamB),
            UnaryOperator.identity())) {
      String teamA = world.namespace();
      KubernetesClient client = kube.client();
      create(client, task(teamA, "watched", s -> s.setDelay("500ms")));
      create(client, task(teamB, "also-watched", s -> s.setDelay("500ms")));
      create(client, task(teamC, "ignored", s -> s.setDelay("500ms")));

      await()
          .atMost(TIMEOUT)
          .until(() -> phase(client, teamA, "watched").orElse(null) == Phase.Fired);
      await()
          .atMost(TIMEOUT)
          .until(() -> phase(client, teamB, "also-watched").orElse(null) == Phase.Fired);
      await()
          .during(Duration.ofSeconds(2))
          .atMost(Duration.ofSeconds(5))
          .until(() -> get(client, teamC, "ignored").getStatus() == null);
      for (String ns : List.of(teamA, teamB, teamC, "default")) {
        assertThat(client.leases().inNamespace(ns).list().getItems())
            .as("Leases in %s", ns)
            .isEmpty();
      }
    }
  }
}
