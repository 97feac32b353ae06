package io.delayedtask.operator.sink;

import static io.delayedtask.operator.testing.Tasks.create;
import static io.delayedtask.operator.testing.Tasks.get;
import static io.delayedtask.operator.testing.Tasks.phase;
import static io.delayedtask.operator.testing.Tasks.rfc3339;
import static io.delayedtask.operator.testing.Tasks.task;
import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import io.delayedtask.operator.api.v1alpha1.Destination;
import io.delayedtask.operator.api.v1alpha1.Phase;
import io.delayedtask.operator.api.v1alpha1.ServiceReference;
import io.delayedtask.operator.config.SinkConfig;
import io.delayedtask.operator.testing.LoopbackOnlyNetwork;
import io.delayedtask.operator.testing.OperatorFixture;
import io.delayedtask.operator.testing.RealKubernetes;
import io.delayedtask.operator.testing.RequiresRealKubernetes;
import io.delayedtask.operator.testing.TestResolver;
import io.fabric8.kubernetes.api.model.ServiceBuilder;
import io.fabric8.kubernetes.client.KubernetesClient;
import java.time.Duration;
import java.time.Instant;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;

/**
 * The sink's address guard end to end, aimed at the cloud metadata address. This test is the one
 * that points the operator at a link-local address, so it runs in a network namespace that has
 * only loopback (failsafe's "loopback-only-network" execution, through tools/loopback-only/bin/java),
 * with the API server, etcd and Redis it starts: a broken guard fails to connect there instead of
 * sending a packet off this machine. Where no namespace can be made it says so loudly and runs in
 * the host's network, its operator's sockets still connecting to loopback only.
 */
@RequiresRealKubernetes
class LinkLocalSinkIT {
  private static final Duration TIMEOUT = Duration.ofSeconds(30);

  @Test
  void noServiceLeadsToALinkLocalAddressWhateverItNames() {
    LoopbackOnlyNetwork.warnUnlessIsolated();
    RealKubernetes kube = RealKubernetes.shared();
    KubernetesClient client = kube.client();
    try (OperatorFixture.OnRealKubernetes world = OperatorFixture.startOnRealKubernetes(kube, "link-local",
        // The URLs the ExternalNames yield are allowed, so that what refuses them is the address guard.
        Map.of(SinkConfig.ALLOWED_URIS, "http://169.254.169.254/," + "http://" + TestResolver.METADATA + "/"))) {
      String ns = world.namespace();
      // Two ways there: an ExternalName that is an IP literal, and one whose name resolves to the
      // metadata address (TestResolver; no DNS). Besides the namespace, the operator's sockets
      // connect to loopback only and record anything else in SINK_SOCKETS.refused().
      for (String[] service : new String[][] {{"metadata-ip", "169.254.169.254"}, {"metadata-name", TestResolver.METADATA}}) {
        client.services().inNamespace(ns).resource(new ServiceBuilder().withNewMetadata().withName(service[0]).endMetadata()
            .withNewSpec().withType("ExternalName").withExternalName(service[1]).endSpec().build()).create();
        create(client, task(ns, "to-" + service[0], s -> {
          s.setRunAt(rfc3339(Instant.now()));
          Destination sink = new Destination();
          sink.setRef(new ServiceReference("v1", "Service", service[0]));
          sink.setUri("/latest/meta-data");
          s.setSink(sink);
        }));
      }

      for (String name : List.of("to-metadata-ip", "to-metadata-name")) {
        await().atMost(TIMEOUT).until(() -> phase(client, ns, name).orElse(null) == Phase.Failed);
        assertThat(get(client, ns, name).getStatus().getMessage()).as(name).contains("169.254.169.254 is link-local");
      }
      assertThat(OperatorFixture.SINK_SOCKETS.refused()).as("the guard refused, not the test's sockets").isEmpty();
    }
  }
}
