package io.delayedtask.operator.sink;

import static io.delayedtask.operator.testing.Tasks.create;
import static io.delayedtask.operator.testing.Tasks.get;
import static io.delayedtask.operator.testing.Tasks.phase;
import static io.delayedtask.operator.testing.Tasks.rfc3339;
import static io.delayedtask.operator.testing.Tasks.task;
import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import io.delayedtask.operator.api.v1alpha1.DelayedTask;
import io.delayedtask.operator.api.v1alpha1.DeliverySpec;
import io.delayedtask.operator.api.v1alpha1.Destination;
import io.delayedtask.operator.api.v1alpha1.Phase;
import io.delayedtask.operator.api.v1alpha1.ServiceReference;
import io.delayedtask.operator.config.SinkConfig;
import io.delayedtask.operator.leader.ScheduleIds;
import io.delayedtask.operator.testing.HangingReceiver;
import io.delayedtask.operator.testing.LoopbackOnlyNetwork;
import io.delayedtask.operator.testing.OperatorFixture;
import io.delayedtask.operator.testing.RealKubernetes;
import io.delayedtask.operator.testing.Receiver;
import io.delayedtask.operator.testing.RequiresRealKubernetes;
import io.fabric8.kubernetes.api.model.Event;
import io.fabric8.kubernetes.api.model.ObjectReference;
import io.fabric8.kubernetes.api.model.ObjectReferenceBuilder;
import io.fabric8.kubernetes.api.model.Pod;
import io.fabric8.kubernetes.api.model.PodBuilder;
import io.fabric8.kubernetes.api.model.Service;
import io.fabric8.kubernetes.api.model.ServiceAccountBuilder;
import io.fabric8.kubernetes.api.model.ServiceBuilder;
import io.fabric8.kubernetes.api.model.discovery.v1.EndpointBuilder;
import io.fabric8.kubernetes.api.model.discovery.v1.EndpointSliceBuilder;
import io.fabric8.kubernetes.client.KubernetesClient;
import io.lettuce.core.RedisClient;
import io.lettuce.core.api.StatefulRedisConnection;
import java.net.InetAddress;
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
 * {@code victim} listens on another loopback port, which no entry names. A namespace has one
 * delivery slot, so an attempt can be made to wait for it while the test changes what its Service
 * lists (finding 1 of issue 32).
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
    world =
        OperatorFixture.startOnRealKubernetes(
            kube,
            "reach",
            Map.of(
                SinkConfig.ALLOWED_URIS,
                "http://localhost:" + allowed.port() + ",https://hooks.example.com/acme",
                SinkConfig.MAX_IN_FLIGHT_PER_NAMESPACE,
                "1"));
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
    client
        .services()
        .inNamespace(ns)
        .resource(
            new ServiceBuilder()
                .withNewMetadata()
                .withName(name)
                .endMetadata()
                .withNewSpec()
                .withType("ExternalName")
                .withExternalName(externalName)
                .addNewPort()
                .withName("http")
                .withPort(port)
                .endPort()
                .endSpec()
                .build())
        .create();
  }

  private static void refTask(String name, String service, String path, String audience) {
    create(client, refTask(name, service, path, audience, 1, "2s"));
  }

  private static DelayedTask refTask(
      String name, String service, String path, String audience, int retry, String timeout) {
    return task(
        ns,
        name,
        s -> {
          s.setRunAt(rfc3339(Instant.now()));
          Destination sink = new Destination();
          sink.setRef(new ServiceReference("v1", "Service", service));
          sink.setUri(path);
          sink.setAudience(audience);
          s.setSink(sink);
          DeliverySpec delivery = new DeliverySpec();
          delivery.setRetry(retry);
          delivery.setBackoffDelay("100ms");
          delivery.setTimeout(timeout);
          s.setDelivery(delivery);
        });
  }

  private static String failedMessage(String name) {
    await(name + " Failed")
        .atMost(TIMEOUT)
        .until(() -> phase(client, ns, name).orElse(null) == Phase.Failed);
    return get(client, ns, name).getStatus().getMessage();
  }

  @Test
  void anExternalNameIsFollowedOnlyWhenTheUrlItYieldsIsAllowed() {
    // The URL it yields is allowed: delivered, through the entry that names localhost and this
    // port.
    externalName("allowed", "localhost", allowed.port());
    refTask("to-allowed", "allowed", "/ok", null);
    await()
        .atMost(TIMEOUT)
        .until(() -> phase(client, ns, "to-allowed").orElse(null) == Phase.Succeeded);
    assertThat(allowed.requestsTo("/ok")).hasSize(1);

    // Another loopback port (the operator's own, a sidecar's admin port): the localhost entry lends
    // it nothing.
    externalName("victim-localhost", "localhost", victim.port());
    externalName("victim-ip", "127.0.0.1", victim.port());
    // Another namespace's Service by its DNS name, and an allowed host on another path and port.
    externalName("victim-namespace", "payments." + elsewhere + ".svc.cluster.local", 8080);
    externalName("hooks-elsewhere", "hooks.example.com", 443);
    refTask("to-victim-localhost", "victim-localhost", "/steal", null);
    refTask("to-victim-ip", "victim-ip", "/steal", null);
    refTask("to-victim-namespace", "victim-namespace", "/refund", null);
    refTask("to-hooks-elsewhere", "hooks-elsewhere", "/acme", null);

    for (String[] refused :
        new String[][] {
          {"to-victim-localhost", "http://localhost:" + victim.port() + "/steal"},
          {"to-victim-ip", "http://127.0.0.1:" + victim.port() + "/steal"},
          {
            "to-victim-namespace", "http://payments." + elsewhere + ".svc.cluster.local:8080/refund"
          },
          {"to-hooks-elsewhere", "http://hooks.example.com:443/acme"}
        }) {
      assertThat(failedMessage(refused[0]))
          .as(refused[0])
          .contains(REF_RULE, "is an ExternalName", refused[1], SinkConfig.ALLOWED_URIS);
    }
    assertThat(victim.requests()).as("the victim received nothing").isEmpty();
  }

  @Test
  void aServiceWhoseEndpointSlicesListAnAddressThatIsNoPodOfTheNamespaceIsRefused() {
    ObjectReference foreignPod =
        new ObjectReferenceBuilder()
            .withKind("Pod")
            .withNamespace(elsewhere)
            .withName("payments-0")
            .build();
    String borrowedIp = selectorlessService("borrowed", "10.244.7.9", foreignPod);
    String bareIp = selectorlessService("bare", "10.244.7.10", null);
    refTask("to-borrowed", "borrowed", "/refund", null);
    refTask("to-bare", "bare", "/refund", null);

    assertThat(failedMessage("to-borrowed"))
        .contains(REF_RULE, "10.244.7.9", "not a Pod of namespace " + ns, SinkConfig.ALLOWED_URIS);
    assertThat(failedMessage("to-bare"))
        .contains(REF_RULE, "10.244.7.10", "not a Pod of namespace " + ns);
    assertThat(victimSawNothing(borrowedIp, bareIp)).isTrue();
  }

  @Test
  void aHandMadeEndpointSliceThatClaimsAPodOfTheNamespaceIsRefused() {
    // The targetRef names a Pod of the task's namespace, the address is another namespace's:
    // hand-made.
    ObjectReference claimed =
        new ObjectReferenceBuilder().withKind("Pod").withNamespace(ns).withName("made-up").build();
    String forgedIp = selectorlessService("forged", "10.244.8.9", claimed);
    String meshIp =
        service(
            "other-manager", Map.of("app", "orders"), "10.244.8.10", claimed, "mesh.example.com");
    refTask("to-forged", "forged", "/refund", null);
    refTask("to-other-manager", "other-manager", "/refund", null);

    // Whoever wrote the slice and its labels, no Pod made-up exists there with that address.
    assertThat(failedMessage("to-forged"))
        .contains(
            REF_RULE,
            "10.244.8.9",
            "not a Pod of namespace " + ns,
            "the operator knows no Pod made-up there",
            SinkConfig.ALLOWED_URIS);
    assertThat(failedMessage("to-other-manager"))
        .contains(
            REF_RULE,
            "10.244.8.10",
            "not a Pod of namespace " + ns,
            "the operator knows no Pod made-up there");
    assertThat(victimSawNothing(forgedIp, meshIp)).isTrue();
  }

  /**
   * Finding 1 of issue 32: the namespace rule is checked when the destination is dialled, not only
   * when it resolves. The Service's one Pod (a stand-in address the test's sockets lead to a
   * hanging receiver) holds the namespace's one delivery slot; a second attempt resolves while the
   * Service lists only that Pod, and waits for the slot. Meanwhile a hand-made EndpointSlice lists
   * a victim Pod of another namespace, and the Service's clusterIP leads to the victim too (as
   * kube-proxy would route it): when the slot frees, the attempt is judged again and refused.
   */
  @Test
  void anEndpointSliceAddedWhileAnAttemptWaitsForItsSlotIsJudgedWhenDialledAndTheVictimGetsNothing()
      throws Exception {
    String podIp = "10.244.32.5";
    String victimIp = "10.244.32.9";
    runningPod("orders-1", podIp);
    String clusterIp = service("orders", null, podIp, pod(ns, "orders-1"), null);
    RedisClient redis = RedisClient.create(world.redis().uri());
    try (HangingReceiver ordersPod = HangingReceiver.start();
        StatefulRedisConnection<String, String> schedule = redis.connect();
        AutoCloseable toThePod =
            OperatorFixture.SINK_SOCKETS.standIn(InetAddress.getByName(podIp), ordersPod.port());
        AutoCloseable toTheVictim =
            OperatorFixture.SINK_SOCKETS.standIn(InetAddress.getByName(victimIp), victim.port());
        AutoCloseable throughTheClusterIp =
            OperatorFixture.SINK_SOCKETS.standIn(InetAddress.getByName(clusterIp), victim.port())) {
      create(client, refTask("holds-the-slot", "orders", "/hold", null, 0, "30s"));
      await("the Service's Pod holds the namespace's one slot")
          .atMost(TIMEOUT)
          .until(() -> ordersPod.paths().contains("/hold"));

      Instant created = Instant.now();
      String waiting =
          ScheduleIds.idOf(
              create(client, refTask("waits-for-a-slot", "orders", "/refund", null, 0, "30s")));
      // The reconciler hands the claim back (its entry at the attempt's safety net) only after the
      // attempt resolved and went to the sender, where it waits for the slot.
      await("the attempt resolved and waits for the slot")
          .atMost(TIMEOUT)
          .until(
              () -> {
                Double score = schedule.sync().zscore("reach:{0}:due", waiting);
                return score != null
                    && score > created.toEpochMilli() + DeliveryDecisions.SAFETY_MARGIN.toMillis();
              });

      victimSlice("orders-victim", "orders", victimIp, pod(elsewhere, "payments-0"));
      // The operator has seen the slice once a task resolving now is refused for it.
      create(client, refTask("sees-the-slice", "orders", "/probe", null, 50, "1s"));
      assertThat(failedMessage("sees-the-slice")).contains(REF_RULE, victimIp);

      ordersPod.answer("/hold");
      await("holds-the-slot Succeeded")
          .atMost(TIMEOUT)
          .until(() -> phase(client, ns, "holds-the-slot").orElse(null) == Phase.Succeeded);
      String why =
          REF_RULE
              + ": Service orders lists "
              + victimIp
              + " in its EndpointSlices, which is not a Pod of "
              + "namespace "
              + ns;
      assertThat(failedMessage("waits-for-a-slot")).contains(why, SinkConfig.ALLOWED_URIS);
      await("its DeliveryFailed Event says why")
          .atMost(TIMEOUT)
          .untilAsserted(
              () ->
                  assertThat(client.v1().events().inNamespace(ns).list().getItems())
                      .filteredOn(
                          e ->
                              "waits-for-a-slot".equals(e.getInvolvedObject().getName())
                                  && DeliveryDecisions.DELIVERY_FAILED.equals(e.getReason()))
                      .extracting(Event::getMessage)
                      .anySatisfy(message -> assertThat(message).contains(why)));
      assertThat(victim.requests()).as("the victim received nothing").isEmpty();
      assertThat(ordersPod.paths())
          .as("the Service's own Pod got only the request that held the slot")
          .containsExactly("/hold");
    } finally {
      redis.shutdown();
    }
  }

  /** A Pod of the task's namespace as the kubelet would report it: Running, with {@code ip}. */
  private static void runningPod(String name, String ip) {
    if (client.serviceAccounts().inNamespace(ns).withName("default").get() == null) {
      // No controller manager: the ServiceAccount admission plugin wants the namespace's default.
      client
          .serviceAccounts()
          .inNamespace(ns)
          .resource(
              new ServiceAccountBuilder()
                  .withNewMetadata()
                  .withName("default")
                  .endMetadata()
                  .build())
          .create();
    }
    Pod created =
        client
            .pods()
            .inNamespace(ns)
            .resource(
                new PodBuilder()
                    .withNewMetadata()
                    .withName(name)
                    .endMetadata()
                    .withNewSpec()
                    .addNewContainer()
                    .withName("receiver")
                    .withImage("registry.invalid/receiver:1")
                    .endContainer()
                    .endSpec()
                    .build())
            .create();
    created.setStatus(
        new io.fabric8.kubernetes.api.model.PodStatusBuilder()
            .withPhase("Running")
            .withPodIP(ip)
            .addNewPodIP()
            .withIp(ip)
            .endPodIP()
            .build());
    client.pods().inNamespace(ns).resource(created).updateStatus();
  }

  private static ObjectReference pod(String namespace, String name) {
    return new ObjectReferenceBuilder()
        .withKind("Pod")
        .withNamespace(namespace)
        .withName(name)
        .build();
  }

  /** One more EndpointSlice, made by hand, for an existing Service. */
  private static void victimSlice(
      String name, String service, String address, ObjectReference target) {
    client
        .discovery()
        .v1()
        .endpointSlices()
        .inNamespace(ns)
        .resource(
            new EndpointSliceBuilder()
                .withNewMetadata()
                .withName(name)
                .withLabels(Map.of("kubernetes.io/service-name", service))
                .endMetadata()
                .withAddressType("IPv4")
                .addNewPort()
                .withName("http")
                .withPort(8080)
                .withProtocol("TCP")
                .endPort()
                .withEndpoints(
                    new EndpointBuilder().withAddresses(address).withTargetRef(target).build())
                .build())
        .create();
  }

  private static boolean victimSawNothing(String... clusterIps) {
    return OperatorFixture.SINK_SOCKETS.refused().stream()
        .noneMatch(
            address ->
                List.of(clusterIps).stream().anyMatch(ip -> address.toString().contains(ip)));
  }

  @Test
  void aTokenIsNeverSentToAnExternalNameOverPlainHttp() {
    externalName("outside", "localhost", allowed.port());
    refTask("token-outside", "outside", "/token", "orders");
    assertThat(failedMessage("token-outside"))
        .contains(
            "sink.audience is set, and a token is sent only over https "
                + "or to a Service of this namespace");
    assertThat(allowed.requestsTo("/token")).isEmpty();
  }

  /**
   * A Service without a selector and one hand-made EndpointSlice; returns the clusterIP the API
   * server gave it.
   */
  private static String selectorlessService(String name, String address, ObjectReference target) {
    return service(name, null, address, target, null);
  }

  /**
   * A Service and one EndpointSlice made by hand, labelled as managed by {@code managedBy} when
   * given.
   */
  private static String service(
      String name,
      Map<String, String> selector,
      String address,
      ObjectReference target,
      String managedBy) {
    Service service =
        client
            .services()
            .inNamespace(ns)
            .resource(
                new ServiceBuilder()
                    .withNewMetadata()
                    .withName(name)
                    .endMetadata()
                    .withNewSpec()
                    .withSelector(selector)
                    .addNewPort()
                    .withName("http")
                    .withPort(80)
                    .endPort()
                    .endSpec()
                    .build())
            .create();
    Map<String, String> labels =
        new java.util.HashMap<>(Map.of("kubernetes.io/service-name", name));
    if (managedBy != null) {
      labels.put("endpointslice.kubernetes.io/managed-by", managedBy);
    }
    client
        .discovery()
        .v1()
        .endpointSlices()
        .inNamespace(ns)
        .resource(
            new EndpointSliceBuilder()
                .withNewMetadata()
                .withName(name + "-by-hand")
                .withLabels(labels)
                .endMetadata()
                .withAddressType("IPv4")
                .addNewPort()
                .withName("http")
                .withPort(8080)
                .withProtocol("TCP")
                .endPort()
                .withEndpoints(
                    new EndpointBuilder().withAddresses(address).withTargetRef(target).build())
                .build())
        .create();
    return service.getSpec().getClusterIP();
  }
}
