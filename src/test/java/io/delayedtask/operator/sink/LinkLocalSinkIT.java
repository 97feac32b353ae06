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
import io.delayedtask.operator.testing.Receiver;
import io.delayedtask.operator.testing.RequiresRealKubernetes;
import io.delayedtask.operator.testing.TestResolver;
import io.fabric8.kubernetes.api.model.ServiceBuilder;
import io.fabric8.kubernetes.client.KubernetesClient;
import java.time.Duration;
import java.time.Instant;
import java.util.Map;
import org.junit.jupiter.api.Test;

/**
 * The sink's address guard end to end, aimed at the cloud metadata address, an IPv6 link-local
 * address and a loopback port reached through a name. This test is the one that points the operator
 * at a link-local address, so it runs in a network namespace that has only loopback (failsafe's
 * "loopback-only-network" execution, through tools/loopback-only/bin/java), with the API server,
 * etcd and Redis it starts: a broken guard fails to connect there instead of sending a packet off
 * this machine. Where no namespace can be made it says so loudly and runs in the host's network,
 * its operator's sockets still connecting to loopback only.
 */
@RequiresRealKubernetes
class LinkLocalSinkIT {
  private static final Duration TIMEOUT = Duration.ofSeconds(30);

  @Test
  void noServiceLeadsToALinkLocalOrLoopbackAddressWhateverItNames() {
    LoopbackOnlyNetwork.warnUnlessIsolated();
    RealKubernetes kube = RealKubernetes.shared();
    KubernetesClient client = kube.client();
    // Listens where the loopback name leads: a guard that let it through would deliver, not fail to
    // connect.
    try (Receiver victim = Receiver.start();
        OperatorFixture.OnRealKubernetes world =
            OperatorFixture.startOnRealKubernetes(
                kube,
                "link-local",
                // The URLs the ExternalNames and the literal yield are allowed, so that what
                // refuses them is
                // the address guard. No entry names a loopback host: loopback.test is a name that
                // leads there.
                Map.of(
                    SinkConfig.ALLOWED_URIS,
                    String.join(
                        ",",
                        "http://169.254.169.254/",
                        "http://" + TestResolver.METADATA + "/",
                        "http://[fe80::1]/",
                        "http://" + TestResolver.LINK_LOCAL_V6 + "/",
                        "http://" + TestResolver.LOOPBACK + ":" + victim.port() + "/")))) {
      String ns = world.namespace();
      // Ways there: an ExternalName that is an IP literal, and ExternalNames whose name resolves to
      // the metadata, an IPv6 link-local or a loopback address (TestResolver; no DNS); and an IPv6
      // literal uri. Besides the namespace, the operator's sockets connect to loopback only and
      // record
      // anything else in SINK_SOCKETS.refused().
      // Name, externalName, port (none: 80).
      String[][] services = {
        {"metadata-ip", "169.254.169.254", null},
        {"metadata-name", TestResolver.METADATA, null},
        {"link-local-name", TestResolver.LINK_LOCAL_V6, null},
        {"loopback-name", TestResolver.LOOPBACK, Integer.toString(victim.port())}
      };
      for (String[] service : services) {
        ServiceBuilder externalName =
            new ServiceBuilder()
                .withNewMetadata()
                .withName(service[0])
                .endMetadata()
                .withNewSpec()
                .withType("ExternalName")
                .withExternalName(service[1])
                .endSpec();
        if (service[2] != null) {
          externalName
              .editSpec()
              .addNewPort()
              .withName("http")
              .withPort(Integer.parseInt(service[2]))
              .endPort()
              .endSpec();
        }
        client.services().inNamespace(ns).resource(externalName.build()).create();
        create(
            client,
            task(
                ns,
                "to-" + service[0],
                s -> {
                  s.setRunAt(rfc3339(Instant.now()));
                  Destination sink = new Destination();
                  sink.setRef(new ServiceReference("v1", "Service", service[0]));
                  sink.setUri("/latest/meta-data");
                  s.setSink(sink);
                }));
      }
      create(
          client,
          task(
              ns,
              "to-link-local-ip",
              s -> {
                s.setRunAt(rfc3339(Instant.now()));
                Destination sink = new Destination();
                sink.setUri("http://[fe80::1]/latest/meta-data");
                s.setSink(sink);
              }));

      Map<String, String> refusals =
          Map.of(
              "to-metadata-ip",
              "169.254.169.254 is link-local",
              "to-metadata-name",
              "169.254.169.254 is link-local",
              "to-link-local-name",
              "fe80::1 is link-local",
              "to-link-local-ip",
              "fe80::1 is link-local",
              "to-loopback-name",
              "127.0.0.1 is loopback");
      refusals.forEach(
          (name, rule) -> {
            await(name)
                .atMost(TIMEOUT)
                .until(() -> phase(client, ns, name).orElse(null) == Phase.Failed);
            assertThat(get(client, ns, name).getStatus().getMessage()).as(name).contains(rule);
          });
      assertThat(victim.requests()).as("nothing reached the loopback receiver").isEmpty();
      assertThat(OperatorFixture.SINK_SOCKETS.refused())
          .as("the guard refused, not the test's sockets")
          .isEmpty();
    }
  }
}
