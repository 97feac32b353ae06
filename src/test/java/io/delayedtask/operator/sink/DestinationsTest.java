package io.delayedtask.operator.sink;

import static org.assertj.core.api.Assertions.assertThat;

import io.delayedtask.operator.config.SinkConfig;
import io.delayedtask.operator.sink.Destinations.Resolution;
import io.delayedtask.operator.sink.Destinations.ServiceRef;
import io.fabric8.kubernetes.api.model.ObjectReference;
import io.fabric8.kubernetes.api.model.ObjectReferenceBuilder;
import io.fabric8.kubernetes.api.model.Pod;
import io.fabric8.kubernetes.api.model.PodBuilder;
import io.fabric8.kubernetes.api.model.Service;
import io.fabric8.kubernetes.api.model.ServiceBuilder;
import io.fabric8.kubernetes.api.model.ServicePort;
import io.fabric8.kubernetes.api.model.ServicePortBuilder;
import io.fabric8.kubernetes.api.model.discovery.v1.EndpointBuilder;
import io.fabric8.kubernetes.api.model.discovery.v1.EndpointSlice;
import io.fabric8.kubernetes.api.model.discovery.v1.EndpointSliceBuilder;
import io.fabric8.kubernetes.client.KubernetesClient;
import io.fabric8.kubernetes.client.server.mock.EnableKubernetesMockClient;
import java.net.URI;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import org.junit.jupiter.api.Test;

/**
 * Where a sink leads, from a hand-written directory of Services and EndpointSlices (what the
 * informers hold). What Kubernetes decides (ExternalName, EndpointSlices) is tested on a real API
 * server in {@code SinkReachIT}.
 */
@EnableKubernetesMockClient(crud = true)
class DestinationsTest {
  private static final String NS = "shop";

  /** The mock API server serves no Knative kinds: an Addressable's kind is not found there. */
  KubernetesClient client;

  private final Directory directory = new Directory();

  private Destinations destinations(String... allowed) {
    return new Destinations(
        directory,
        new Addressables(client),
        new SinkConfig(List.of(allowed), "corp.example", "delayedtask-sender", 1, 1));
  }

  /** Services and slices by hand; {@code knows} only the namespaces listed. */
  static final class Directory implements ServiceDirectory {
    final Map<String, Service> services = new HashMap<>();
    final List<EndpointSlice> slices = new ArrayList<>();
    final Map<String, Pod> pods = new HashMap<>();
    boolean listed = true;

    @Override
    public boolean knows(String namespace) {
      return listed;
    }

    @Override
    public Optional<Service> service(String namespace, String name) {
      return Optional.ofNullable(services.get(namespace + "/" + name));
    }

    @Override
    public List<EndpointSlice> endpointSlices(String namespace, String service) {
      return slices.stream()
          .filter(
              s ->
                  s.getMetadata().getNamespace().equals(namespace)
                      && service.equals(
                          s.getMetadata().getLabels().get("kubernetes.io/service-name")))
          .toList();
    }

    /** A ClusterIP or NodePort Service selects Pods (app: its name); an ExternalName does not. */
    void service(
        String name, String type, String clusterIp, String externalName, ServicePort... ports) {
      services.put(
          NS + "/" + name,
          new ServiceBuilder()
              .withNewMetadata()
              .withName(name)
              .withNamespace(NS)
              .endMetadata()
              .withNewSpec()
              .withType(type)
              .withClusterIP(clusterIp)
              .withExternalName(externalName)
              .withPorts(ports)
              .withSelector("ExternalName".equals(type) ? null : Map.of("app", name))
              .endSpec()
              .build());
    }

    /**
     * A Pod of the namespace as the kubelet reports it: running, on the Pod network, with {@code
     * ip}.
     */
    void runningPod(String name, String ip) {
      runningPod(name, ip, "Running", false);
    }

    void runningPod(String name, String ip, String phase, boolean hostNetwork) {
      pods.put(
          NS + "/" + name,
          new PodBuilder()
              .withNewMetadata()
              .withName(name)
              .withNamespace(NS)
              .endMetadata()
              .withNewSpec()
              .withHostNetwork(hostNetwork)
              .endSpec()
              .withNewStatus()
              .withPhase(phase)
              .addNewPodIP()
              .withIp(ip)
              .endPodIP()
              .endStatus()
              .build());
    }

    @Override
    public Optional<Pod> pod(String namespace, String name) {
      return Optional.ofNullable(pods.get(namespace + "/" + name));
    }

    void withoutSelector(String name) {
      services.get(NS + "/" + name).getSpec().setSelector(null);
    }

    /** A slice as Kubernetes' EndpointSlice controller makes it. */
    void slice(String service, String address, ObjectReference target) {
      slice(service, address, target, "endpointslice-controller.k8s.io");
    }

    void slice(String service, String address, ObjectReference target, String managedBy) {
      Map<String, String> labels = new HashMap<>(Map.of("kubernetes.io/service-name", service));
      if (managedBy != null) {
        labels.put("endpointslice.kubernetes.io/managed-by", managedBy);
      }
      slices.add(
          new EndpointSliceBuilder()
              .withNewMetadata()
              .withName(service + "-" + slices.size())
              .withNamespace(NS)
              .withLabels(labels)
              .endMetadata()
              .withAddressType("IPv4")
              .withEndpoints(
                  new EndpointBuilder().withAddresses(address).withTargetRef(target).build())
              .build());
    }
  }

  private static ServicePort port(String name, int port) {
    return new ServicePortBuilder().withName(name).withPort(port).build();
  }

  private static ObjectReference pod(String namespace, String name) {
    return new ObjectReferenceBuilder()
        .withKind("Pod")
        .withNamespace(namespace)
        .withName(name)
        .build();
  }

  private Resolution resolve(Destinations destinations, String service, String uri) {
    return destinations.resolve(
        NS, Optional.of(new ServiceRef("v1", "Service", service)), Optional.ofNullable(uri));
  }

  private Resolution resolve(String service, String uri) {
    return resolve(destinations(), service, uri);
  }

  /**
   * A Service of the namespace: reached at its verified endpoints, for the Service port named
   * {@code portName}.
   */
  private Resolution inCluster(String url, String service, String portName) {
    return new Resolution.Resolved(
        URI.create(url), new Reach.ServiceEndpoints(directory, NS, service, portName), true);
  }

  private void standardServices() {
    directory.service(
        "orders", "ClusterIP", "10.96.0.20", null, port("http", 80), port("metrics", 9090));
    directory.service("billing", "ClusterIP", "10.96.0.21", null, port("grpc", 8443));
    directory.service("headless", "ClusterIP", "None", null, port(null, 8080));
    directory.service(
        "node", "NodePort", "10.96.0.22", null, port("web", 8080), port("http", 8081));
    directory.service(
        "several", "ClusterIP", "10.96.0.23", null, port("web", 8080), port("admin", 9000));
  }

  @Test
  void theHttpPortOnItsDefaultIsLeftOut() {
    standardServices();
    directory.slice("orders", "10.0.0.5", pod(NS, "orders-1"));
    directory.runningPod("orders-1", "10.0.0.5");
    assertThat(resolve("orders", "/orders/cancel?reason=late"))
        .isEqualTo(
            inCluster(
                "http://orders.shop.svc.corp.example/orders/cancel?reason=late", "orders", "http"));
    assertThat(resolve("orders", null))
        .isEqualTo(inCluster("http://orders.shop.svc.corp.example", "orders", "http"));
  }

  @Test
  void theOnlyPortOrThePortNamedHttp() {
    standardServices();
    assertThat(resolve("billing", "/x"))
        .isEqualTo(inCluster("http://billing.shop.svc.corp.example:8443/x", "billing", "grpc"));
    assertThat(resolve("node", "/x"))
        .isEqualTo(inCluster("http://node.shop.svc.corp.example:8081/x", "node", "http"));
  }

  @Test
  void aHeadlessServiceIsReachedAtItsEndpointsAsAnyOther() {
    standardServices();
    assertThat(resolve("headless", "/"))
        .isEqualTo(inCluster("http://headless.shop.svc.corp.example:8080/", "headless", ""));
  }

  @Test
  void severalPortsNoneNamedHttpIsNotRetried() {
    standardServices();
    assertThat(resolve("several", "/"))
        .isEqualTo(
            new Resolution.Unresolvable(
                "Service several in namespace shop "
                    + "has several ports and none named http: name the one to deliver to http",
                false));
  }

  @Test
  void aMissingServiceMayAppearLater() {
    assertThat(resolve("absent", "/"))
        .isEqualTo(new Resolution.Unresolvable("Service absent not found in namespace shop", true));
  }

  @Test
  void untilTheServicesAreListedARefWaits() {
    standardServices();
    directory.listed = false;
    assertThat(resolve("orders", "/"))
        .isEqualTo(
            new Resolution.Unresolvable(
                "the operator has not listed the Services of namespace shop yet", true));
  }

  @Test
  void withARefTheUriIsAPath() {
    standardServices();
    assertThat(resolve("orders", "orders/cancel"))
        .isInstanceOfSatisfying(
            Resolution.Unresolvable.class,
            u -> {
              assertThat(u.retryable()).isFalse();
              assertThat(u.message()).contains("must start with '/'");
            });
  }

  @Test
  void aKindNotServedIsFirstARetryThenNeverAndBuiltInKindsAreNeverAskedAbout() {
    Destinations destinations = destinations();
    ServiceRef ksvc = new ServiceRef("serving.knative.dev/v1", "Service", "orders");
    assertThat(destinations.resolve(NS, Optional.of(ksvc), Optional.empty()))
        .isEqualTo(
            new Resolution.Unresolvable(
                "the operator is still checking whether Service (serving.knative.dev/v1) is a Knative Addressable",
                true));
    org.awaitility.Awaitility.await()
        .atMost(java.time.Duration.ofSeconds(10))
        .untilAsserted(
            () ->
                assertThat(destinations.resolve(NS, Optional.of(ksvc), Optional.empty()))
                    .isEqualTo(
                        new Resolution.Unresolvable(
                            "sink.ref serving.knative.dev/v1 Service: the API server serves no kind "
                                + "Service in serving.knative.dev/v1; install the CRD (Knative) that defines it, or fix the ref",
                            false)));
    for (ServiceRef builtIn :
        List.of(
            new ServiceRef("batch/v1", "Job", "j"),
            new ServiceRef("discovery.k8s.io/v1", "EndpointSlice", "s"),
            new ServiceRef("delayedtask.io/v1alpha1", "DelayedTask", "t"),
            new ServiceRef("apps/v1", "Deployment", "d"))) {
      assertThat(destinations.resolve(NS, Optional.of(builtIn), Optional.empty()))
          .as(builtIn.kind())
          .isInstanceOfSatisfying(
              Resolution.Unresolvable.class,
              u -> {
                assertThat(u.retryable()).isFalse();
                assertThat(u.message()).contains("is neither", "duck.knative.dev/addressable");
              });
    }
  }

  @Test
  void anExternalNameIsFollowedOnlyWhenTheUrlItYieldsIsAllowed() {
    directory.service("external", "ExternalName", null, "hooks.example.com");
    directory.service(
        "external-port", "ExternalName", null, "hooks.example.com", port("http", 8080));
    assertThat(resolve("external", "/hook"))
        .isInstanceOfSatisfying(
            Resolution.Unresolvable.class,
            u -> {
              assertThat(u.retryable()).isFalse();
              assertThat(u.message())
                  .contains(
                      "a sink.ref reaches only the task's namespace",
                      "ExternalName for hooks.example.com",
                      "http://hooks.example.com/hook",
                      SinkConfig.ALLOWED_URIS);
            });
    Destinations allowing = destinations("http://hooks.example.com/hook");
    assertThat(resolve(allowing, "external", "/hook"))
        .isEqualTo(
            new Resolution.Resolved(
                URI.create("http://external.shop.svc.corp.example/hook"),
                new Reach.ByName(Optional.of("hooks.example.com"), false, true),
                false));
    assertThat(resolve(allowing, "external", "/other")).isInstanceOf(Resolution.Unresolvable.class);
    assertThat(resolve(allowing, "external-port", "/hook"))
        .as("the port is part of the URL it yields")
        .isInstanceOf(Resolution.Unresolvable.class);
    assertThat(resolve(destinations("http://hooks.example.com:8080/"), "external-port", "/hook"))
        .isInstanceOf(Resolution.Resolved.class);
  }

  @Test
  void anExternalNameReachesLoopbackOnlyThroughAnEntryNamingThatLoopbackHost() {
    directory.service("local", "ExternalName", null, "localhost", port("http", 8099));
    directory.service("local-ip", "ExternalName", null, "127.0.0.1", port("http", 8099));
    // Another entry naming loopback, or a loopback entry for another port, lends nothing.
    Destinations otherLoopback = destinations("http://127.0.0.1:8099", "http://localhost:9000");
    assertThat(resolve(otherLoopback, "local", "/")).isInstanceOf(Resolution.Unresolvable.class);
    assertThat(resolve(otherLoopback, "local-ip", "/"))
        .isInstanceOfSatisfying(
            Resolution.Resolved.class, r -> assertThat(r.loopbackAllowed()).isTrue());
    assertThat(resolve(destinations("http://localhost:8099/"), "local", "/"))
        .isInstanceOfSatisfying(
            Resolution.Resolved.class, r -> assertThat(r.loopbackAllowed()).isTrue());
  }

  @Test
  void aServiceWhoseEndpointSlicesListAnAddressThatIsNoPodOfTheNamespaceIsRefused() {
    directory.service("mine", "ClusterIP", "10.96.0.30", null, port("http", 80));
    directory.service("borrowed", "ClusterIP", "10.96.0.31", null, port("http", 80));
    directory.service("bare", "ClusterIP", "10.96.0.32", null, port("http", 80));
    directory.service("node", "ClusterIP", "10.96.0.33", null, port("http", 80));
    directory.slice("mine", "10.0.0.5", pod(NS, "mine-1"));
    directory.runningPod("mine-1", "10.0.0.5");
    directory.slice("borrowed", "10.0.0.5", pod(NS, "mine-1"));
    directory.slice("borrowed", "10.0.9.9", pod("payments", "refunds-1"));
    directory.slice("bare", "10.1.2.3", null);
    directory.slice(
        "node", "10.1.2.4", new ObjectReferenceBuilder().withKind("Node").withName("n1").build());

    assertThat(resolve("mine", "/")).isInstanceOf(Resolution.Resolved.class);
    for (String[] refused :
        new String[][] {{"borrowed", "10.0.9.9"}, {"bare", "10.1.2.3"}, {"node", "10.1.2.4"}}) {
      assertThat(resolve(refused[0], "/"))
          .as(refused[0])
          .isInstanceOfSatisfying(
              Resolution.Unresolvable.class,
              u -> {
                assertThat(u.retryable()).isFalse();
                assertThat(u.message())
                    .contains(
                        "a sink.ref reaches only the task's namespace",
                        refused[1],
                        "not a Pod of namespace shop",
                        SinkConfig.ALLOWED_URIS);
              });
    }
  }

  @Test
  void anEndpointIsVerifiedByThePodItNamesNeverByTheSlicesLabelsOrTargetRefAlone() {
    for (String name :
        List.of("selected", "forged", "labelled", "host", "finished", "selectorless", "empty")) {
      directory.service(name, "ClusterIP", "10.96.0.40", null, port("http", 80));
    }
    directory.withoutSelector("selectorless");
    directory.withoutSelector("empty");
    directory.runningPod("selected-1", "10.0.0.5");
    directory.runningPod("host-1", "192.168.1.10", "Running", true);
    directory.runningPod("finished-1", "10.0.0.8", "Succeeded", false);
    directory.slice("selected", "10.0.0.5", pod(NS, "selected-1"));
    // Anyone who may write an EndpointSlice may claim any Pod, and write the controller's own
    // label.
    directory.slice("forged", "10.0.9.9", pod(NS, "made-up"), "someone");
    directory.slice(
        "labelled", "10.0.9.9", pod(NS, "selected-1"), "endpointslice-controller.k8s.io");
    directory.slice("host", "192.168.1.10", pod(NS, "host-1"));
    directory.slice("finished", "10.0.0.8", pod(NS, "finished-1"));
    // A slice made by hand for a Service without a selector, listing a Pod of the namespace at its
    // address.
    directory.slice("selectorless", "10.0.0.5", pod(NS, "selected-1"), null);

    assertThat(resolve("selected", "/")).isInstanceOf(Resolution.Resolved.class);
    assertThat(resolve("selectorless", "/"))
        .as("verified by its Pod, whoever wrote the slice")
        .isInstanceOf(Resolution.Resolved.class);
    assertThat(resolve("empty", "/"))
        .as("no endpoints yet: nothing reached")
        .isInstanceOf(Resolution.Resolved.class);
    for (String[] refused :
        new String[][] {
          {"forged", "10.0.9.9", "the operator knows no Pod made-up there"},
          {"labelled", "10.0.9.9", "Pod selected-1 does not have that address"},
          {"host", "192.168.1.10", "Pod host-1 is on its node's network"},
          {"finished", "10.0.0.8", "Pod finished-1 has finished"}
        }) {
      assertThat(resolve(refused[0], "/"))
          .as(refused[0])
          .isInstanceOfSatisfying(
              Resolution.Unresolvable.class,
              u -> {
                assertThat(u.retryable()).isFalse();
                assertThat(u.message())
                    .contains(
                        "a sink.ref reaches only the task's namespace: Service "
                            + refused[0]
                            + " lists "
                            + refused[1],
                        "not a Pod of namespace shop (" + refused[2],
                        SinkConfig.ALLOWED_URIS);
              });
    }
  }

  @Test
  void withoutARefTheUriMustBeAllowedAndLoopbackFollowsItsEntry() {
    assertThat(
            destinations("https://hooks.example.com/a")
                .resolve(NS, Optional.empty(), Optional.of("https://hooks.example.com/a?b=c")))
        .isEqualTo(
            new Resolution.Resolved(
                URI.create("https://hooks.example.com/a?b=c"),
                new Reach.ByName(Optional.empty(), false, true),
                false));
    assertThat(
            destinations("https://hooks.example.com/a")
                .resolve(NS, Optional.empty(), Optional.of("https://hooks.example.com/b")))
        .isInstanceOf(Resolution.Unresolvable.class);
    assertThat(
            destinations("http://127.0.0.1:8099", "https://hooks.example.com/")
                .resolve(NS, Optional.empty(), Optional.of("http://127.0.0.1:8099/x")))
        .isInstanceOfSatisfying(
            Resolution.Resolved.class, r -> assertThat(r.loopbackAllowed()).isTrue());
    assertThat(
            destinations("http://127.0.0.1:8099", "https://hooks.example.com/")
                .resolve(NS, Optional.empty(), Optional.of("https://hooks.example.com/x")))
        .isInstanceOfSatisfying(
            Resolution.Resolved.class,
            r ->
                assertThat(r.loopbackAllowed())
                    .as("another entry names loopback: not this URL's")
                    .isFalse());
    assertThat(destinations().resolve(NS, Optional.empty(), Optional.of("/relative")))
        .isInstanceOfSatisfying(
            Resolution.Unresolvable.class, u -> assertThat(u.retryable()).isFalse());
    assertThat(destinations().resolve(NS, Optional.empty(), Optional.empty()))
        .isEqualTo(new Resolution.Unresolvable("sink needs a ref or a uri", false));
  }

  /**
   * Addressables by hand: kind/name to status.address.url, with the task's path appended as
   * Addressables does.
   */
  private final Map<String, String> addresses = new HashMap<>();

  private Destinations withAddresses(String... allowed) {
    AddressableDirectory fake =
        (namespace, apiVersion, kind, name, pathAndQuery) -> {
          String base = addresses.get(kind + "/" + name);
          return base == null
              ? new Resolution.Unresolvable(kind + " " + name + " not found", true)
              : new Resolution.Resolved(
                  URI.create(base + pathAndQuery), Optional.empty(), false, false);
        };
    return new Destinations(
        directory,
        fake,
        new SinkConfig(List.of(allowed), "corp.example", "delayedtask-sender", 1, 1));
  }

  private Resolution broker(Destinations destinations, String name, String uri) {
    return destinations.resolve(
        NS,
        Optional.of(new ServiceRef("eventing.knative.dev/v1", "Broker", name)),
        Optional.ofNullable(uri));
  }

  @Test
  void
      anAddressableUrlNamingNoServiceOfTheNamespaceAndNoEntryIsRefusedNamingTheRuleAndTheVariable() {
    addresses.put("Broker/payments", "http://payments.bank.svc.corp.example");
    addresses.put("Broker/apiserver", "https://kubernetes.default.svc.corp.example:443");
    addresses.put("Broker/node", "http://10.0.0.7:10250");
    addresses.put("Broker/lookalike", "http://orders.shop.svc.corp.example.evil.io");
    for (String name : List.of("payments", "apiserver", "node", "lookalike")) {
      assertThat(broker(withAddresses(), name, "/x"))
          .as(name)
          .isInstanceOfSatisfying(
              Resolution.Unresolvable.class,
              u -> {
                assertThat(u.retryable()).isFalse();
                assertThat(u.message())
                    .contains(
                        "an Addressable's address is held to the walls of an absolute URL",
                        "Broker " + name,
                        "no Service of namespace shop",
                        SinkConfig.ALLOWED_URIS);
              });
    }
  }

  @Test
  void anAddressableUrlNamingAServiceOfTheNamespaceIsResolvedByTheServiceRules() {
    standardServices();
    directory.slice("orders", "10.0.0.5", pod(NS, "orders-1"));
    directory.runningPod("orders-1", "10.0.0.5");
    addresses.put("Broker/orders", "http://orders.shop.svc.corp.example/base");
    addresses.put("Broker/gone", "http://gone.shop.svc.corp.example");
    addresses.put("Broker/secure", "https://orders.shop.svc.corp.example:8443");
    assertThat(broker(withAddresses(), "orders", "/cancel?x=1"))
        .isEqualTo(
            inCluster("http://orders.shop.svc.corp.example/base/cancel?x=1", "orders", "http"));
    assertThat(broker(withAddresses(), "gone", null))
        .isEqualTo(new Resolution.Unresolvable("Service gone not found in namespace shop", true));
    assertThat(broker(withAddresses(), "secure", "/x"))
        .as("the address's scheme and port are kept")
        .isEqualTo(inCluster("https://orders.shop.svc.corp.example:8443/x", "orders", "http"));
    directory.service("external", "ExternalName", null, "payments.bank.svc.corp.example");
    addresses.put("Broker/external", "http://external.shop.svc.corp.example");
    assertThat(broker(withAddresses(), "external", "/x"))
        .as("an ExternalName still leads nowhere unless allowed")
        .isInstanceOfSatisfying(
            Resolution.Unresolvable.class,
            u ->
                assertThat(u.message())
                    .contains("a sink.ref reaches only the task's namespace", "ExternalName"));
  }

  @Test
  void aNamespaceEntryLetsAnAddressableReachTheSharedIngressForItsOwnNamespaceOnly() {
    String entry = "http://broker-ingress.knative-eventing.svc.corp.example/{namespace}/";
    addresses.put(
        "Broker/default", "http://broker-ingress.knative-eventing.svc.corp.example/shop/default");
    addresses.put(
        "Broker/theirs", "http://broker-ingress.knative-eventing.svc.corp.example/bank/default");
    addresses.put(
        "Broker/sneaky",
        "http://broker-ingress.knative-eventing.svc.corp.example/shop/..;/bank/default");
    assertThat(broker(withAddresses(entry), "default", null))
        .isEqualTo(
            new Resolution.Resolved(
                URI.create("http://broker-ingress.knative-eventing.svc.corp.example/shop/default"),
                new Reach.ByName(Optional.empty(), false, true),
                false));
    assertThat(broker(withAddresses(entry), "theirs", null))
        .isInstanceOf(Resolution.Unresolvable.class);
    assertThat(broker(withAddresses(entry), "sneaky", null))
        .isInstanceOfSatisfying(
            Resolution.Unresolvable.class,
            u -> assertThat(u.message()).contains("holds ';'", "another path"));
  }

  @Test
  void anAbsoluteUriThroughANamespaceEntryReachesOnlyTheTasksNamespaceAndAnAmbiguousPathIsNamed() {
    Destinations destinations =
        withAddresses("https://{namespace}.hooks.example.com/", "https://hooks.example.com/shop/");
    assertThat(
            destinations.resolve(
                NS, Optional.empty(), Optional.of("https://shop.hooks.example.com/x")))
        .isInstanceOf(Resolution.Resolved.class);
    assertThat(
            destinations.resolve(
                NS, Optional.empty(), Optional.of("https://bank.hooks.example.com/x")))
        .isInstanceOf(Resolution.Unresolvable.class);
    assertThat(
            destinations.resolve(
                NS, Optional.empty(), Optional.of("https://hooks.example.com/shop/..%2Fbank/x")))
        .isInstanceOfSatisfying(
            Resolution.Unresolvable.class, u -> assertThat(u.message()).contains("%2F"));
  }
}
