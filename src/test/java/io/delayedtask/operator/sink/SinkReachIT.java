package io.delayedtask.operator.sink;

import static io.delayedtask.operator.testing.Tasks.create;
import static io.delayedtask.operator.testing.Tasks.get;
import static io.delayedtask.operator.testing.Tasks.phase;
import static io.delayedtask.operator.testing.Tasks.rfc3339;
import static io.delayedtask.operator.testing.Tasks.task;
import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import io.delayedtask.operator.api.v1alpha1.DeliverySpec;
import io.delayedtask.operator.api.v1alpha1.Destination;
import io.delayedtask.operator.api.v1alpha1.Phase;
import io.delayedtask.operator.api.v1alpha1.ServiceReference;
import io.delayedtask.operator.config.SinkConfig;
import io.delayedtask.operator.testing.LoopbackOnlyNetwork;
import io.delayedtask.operator.testing.OperatorFixture;
import io.delayedtask.operator.testing.RealKubernetes;
import io.delayedtask.operator.testing.Receiver;
import io.delayedtask.operator.testing.RequiresRealKubernetes;
import io.fabric8.kubernetes.api.model.ObjectReference;
import io.fabric8.kubernetes.api.model.ObjectReferenceBuilder;
import io.fabric8.kubernetes.api.model.Service;
import io.fabric8.kubernetes.api.model.ServiceBuilder;
import io.fabric8.kubernetes.api.model.discovery.v1.EndpointBuilder;
import io.fabric8.kubernetes.api.model.discovery.v1.EndpointSliceBuilder;
import io.fabric8.kubernetes.client.KubernetesClient;
import java.time.Duration;
import java.time.Instant;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

/**
 * Where a {@code sink.ref} may lead, decided on a real API server (its ExternalName and
 * EndpointSlice validation, its clusterIP allocation), each bypass of issue 23 tried against a
 * victim that must receive nothing. A wrong operator would connect to a clusterIP or a hand-made
 * endpoint's address, so this runs in the loopback-only network namespace (failsafe's
 * "loopback-only-network" execution), its operator's sockets connecting to loopback only besides.
 *
 * <p>The allowlist names one receiver ({@code allowed}, by {@code http://localhost:<port>}); the
 * {@code victim} listens on another loopback port, which no entry names.
 */
@RequiresRealKubernetes
class SinkReachIT {
  private static final Duration TIMEOUT = Duration.ofSeconds(45);
  private static final String REF_RULE = "a sink.ref reaches only the task's namespace";

  private static RealKubernetes kube;
  private static KubernetesClient client;
  private static OperatorFixture.OnRealKubernetes world;
  private static String ns;
  private static String elsewhere;
  private static Receiver allowed;
  private static Receiver victim;

  @BeforeAll
  static void start() {
    LoopbackOnlyNetwork.warnUnlessIsolated();
    allowed = Receiver.start();
    victim = Receiver.start();
    kube = RealKubernetes.shared();
    client = kube.client();
    elsewhere = kube.createNamespace("reach-victim");
    world = OperatorFixture.startOnRealKubernetes(kube, "reach", Map.of(SinkConfig.ALLOWED_URIS,
        "http://localhost:" + allowed.port() + ",https://hooks.example.com/acme"));
    ns = world.namespace();
  }

  @AfterAll
  static void stop() {
    if (world != null) {
      world.close();
    }
    for (Receiver receiver : new Receiver[] {allowed, victim}) {
      if (receiver != null) {
        receiver.close();
      }
    }
  }

  private static void externalName(String name, String externalName, int port) {
    client.services().inNamespace(ns).resource(new ServiceBuilder().withNewMetadata().withName(name).endMetadata()
        .withNewSpec().withType("ExternalName").withExternalName(externalName)
        .addNewPort().withName("http").withPort(port).endPort().endSpec().build()).create();
  }

  private static void refTask(String name, String service, String path, String audience) {
    create(client, task(ns, name, s -> {
      s.setRunAt(rfc3339(Instant.now()));
      Destination sink = new Destination();
      sink.setRef(new ServiceReference("v1", "Service", service));
      sink.setUri(path);
      sink.setAudience(audience);
      s.setSink(sink);
      DeliverySpec delivery = new DeliverySpec();
      delivery.setRetry(1);
      delivery.setBackoffDelay("100ms");
      delivery.setTimeout("2s");
      s.setDelivery(delivery);
    }));
  }

  private static String failedMessage(String name) {
    await(name + " Failed").atMost(TIMEOUT).until(() -> phase(client, ns, name).orElse(null) == Phase.Failed);
    return get(client, ns, name).getStatus().getMessage();
  }

  @Test
  void anExternalNameIsFollowedOnlyWhenTheUrlItYieldsIsAllowed() {
    // The URL it yields is allowed: delivered, through the entry that names localhost and this port.
    externalName("allowed", "localhost", allowed.port());
    refTask("to-allowed", "allowed", "/ok", null);
    await().atMost(TIMEOUT).until(() -> phase(client, ns, "to-allowed").orElse(null) == Phase.Succeeded);
    assertThat(allowed.requestsTo("/ok")).hasSize(1);

    // Another loopback port (the operator's own, a sidecar's admin port): the localhost entry lends it nothing.
    externalName("victim-localhost", "localhost", victim.port());
    externalName("victim-ip", "127.0.0.1", victim.port());
    // Another namespace's Service by its DNS name, and an allowed host on another path and port.
    externalName("victim-namespace", "payments." + elsewhere + ".svc.cluster.local", 8080);
    externalName("hooks-elsewhere", "hooks.example.com", 443);
    refTask("to-victim-localhost", "victim-localhost", "/steal", null);
    refTask("to-victim-ip", "victim-ip", "/steal", null);
    refTask("to-victim-namespace", "victim-namespace", "/refund", null);
    refTask("to-hooks-elsewhere", "hooks-elsewhere", "/acme", null);

    for (String[] refused : new String[][] {
        {"to-victim-localhost", "http://localhost:" + victim.port() + "/steal"},
        {"to-victim-ip", "http://127.0.0.1:" + victim.port() + "/steal"},
        {"to-victim-namespace", "http://payments." + elsewhere + ".svc.cluster.local:8080/refund"},
        {"to-hooks-elsewhere", "http://hooks.example.com:443/acme"}}) {
      assertThat(failedMessage(refused[0])).as(refused[0])
          .contains(REF_RULE, "is an ExternalName", refused[1], SinkConfig.ALLOWED_URIS);
    }
    assertThat(victim.requests()).as("the victim received nothing").isEmpty();
  }

  @Test
  void aServiceWhoseEndpointSlicesListAnAddressThatIsNoPodOfTheNamespaceIsRefused() {
    ObjectReference foreignPod = new ObjectReferenceBuilder().withKind("Pod").withNamespace(elsewhere)
        .withName("payments-0").build();
    String borrowedIp = selectorlessService("borrowed", "10.244.7.9", foreignPod);
    String bareIp = selectorlessService("bare", "10.244.7.10", null);
    refTask("to-borrowed", "borrowed", "/refund", null);
    refTask("to-bare", "bare", "/refund", null);

    assertThat(failedMessage("to-borrowed")).contains(REF_RULE, "10.244.7.9", "not a Pod of namespace " + ns,
        SinkConfig.ALLOWED_URIS);
    assertThat(failedMessage("to-bare")).contains(REF_RULE, "10.244.7.10", "not a Pod of namespace " + ns);
    assertThat(victimSawNothing(borrowedIp, bareIp)).isTrue();
  }

  @Test
  void aHandMadeEndpointSliceThatClaimsAPodOfTheNamespaceIsRefused() {
    // The targetRef names a Pod of the task's namespace, the address is another namespace's: hand-made.
    ObjectReference claimed = new ObjectReferenceBuilder().withKind("Pod").withNamespace(ns).withName("made-up")
        .build();
    String forgedIp = selectorlessService("forged", "10.244.8.9", claimed);
    String meshIp = service("other-manager", Map.of("app", "orders"), "10.244.8.10", claimed, "mesh.example.com");
    refTask("to-forged", "forged", "/refund", null);
    refTask("to-other-manager", "other-manager", "/refund", null);

    // Whoever wrote the slice and its labels, no Pod made-up exists there with that address.
    assertThat(failedMessage("to-forged")).contains(REF_RULE, "10.244.8.9", "not a Pod of namespace " + ns,
        "the operator knows no Pod made-up there", SinkConfig.ALLOWED_URIS);
    assertThat(failedMessage("to-other-manager")).contains(REF_RULE, "10.244.8.10", "not a Pod of namespace " + ns,
        "the operator knows no Pod made-up there");
    assertThat(victimSawNothing(forgedIp, meshIp)).isTrue();
  }

  private static boolean victimSawNothing(String... clusterIps) {
    return OperatorFixture.SINK_SOCKETS.refused().stream().noneMatch(address -> List.of(clusterIps).stream()
        .anyMatch(ip -> address.toString().contains(ip)));
  }

  @Test
  void aTokenIsNeverSentToAnExternalNameOverPlainHttp() {
    externalName("outside", "localhost", allowed.port());
    refTask("token-outside", "outside", "/token", "orders");
    assertThat(failedMessage("token-outside")).contains("sink.audience is set, and a token is sent only over https "
        + "or to a Service of this namespace");
    assertThat(allowed.requestsTo("/token")).isEmpty();
  }

  /** A Service without a selector and one hand-made EndpointSlice; returns the clusterIP the API server gave it. */
  private static String selectorlessService(String name, String address, ObjectReference target) {
    return service(name, null, address, target, null);
  }

  /** A Service and one EndpointSlice made by hand, labelled as managed by {@code managedBy} when given. */
  private static String service(String name, Map<String, String> selector, String address, ObjectReference target,
      String managedBy) {
    Service service = client.services().inNamespace(ns).resource(new ServiceBuilder().withNewMetadata().withName(name)
        .endMetadata().withNewSpec().withSelector(selector).addNewPort().withName("http").withPort(80).endPort()
        .endSpec().build()).create();
    Map<String, String> labels = new java.util.HashMap<>(Map.of("kubernetes.io/service-name", name));
    if (managedBy != null) {
      labels.put("endpointslice.kubernetes.io/managed-by", managedBy);
    }
    client.discovery().v1().endpointSlices().inNamespace(ns).resource(new EndpointSliceBuilder().withNewMetadata()
        .withName(name + "-by-hand").withLabels(labels).endMetadata()
        .withAddressType("IPv4")
        .addNewPort().withName("http").withPort(8080).withProtocol("TCP").endPort()
        .withEndpoints(new EndpointBuilder().withAddresses(address).withTargetRef(target).build())
        .build()).create();
    return service.getSpec().getClusterIP();
  }
}
