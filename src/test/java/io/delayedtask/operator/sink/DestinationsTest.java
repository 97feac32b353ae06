package io.delayedtask.operator.sink;

import static org.assertj.core.api.Assertions.assertThat;

import io.delayedtask.operator.config.SinkConfig;
import io.delayedtask.operator.sink.Destinations.Resolution;
import io.delayedtask.operator.sink.Destinations.ServiceRef;
import io.fabric8.kubernetes.api.model.ServiceBuilder;
import io.fabric8.kubernetes.api.model.ServicePort;
import io.fabric8.kubernetes.api.model.ServicePortBuilder;
import io.fabric8.kubernetes.client.KubernetesClient;
import io.fabric8.kubernetes.client.server.mock.EnableKubernetesMockClient;
import java.net.URI;
import java.util.List;
import java.util.Optional;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

/** Reads Services from the fabric8 mock API server (CRUD mode): a GET is all resolution does. */
@EnableKubernetesMockClient(crud = true)
class DestinationsTest {
  private static final String NS = "shop";

  KubernetesClient client;
  private Destinations destinations;

  @BeforeEach
  void services() {
    destinations = new Destinations(client, new SinkConfig(List.of(), "corp.example", "delayedtask-sender", 1, 1));
    service("orders", "ClusterIP", "10.96.0.20", null, port("http", 80), port("metrics", 9090));
    service("billing", "ClusterIP", "10.96.0.21", null, port("grpc", 8443));
    service("headless", "ClusterIP", "None", null, port(null, 8080));
    service("external", "ExternalName", null, "hooks.example.com");
    service("node", "NodePort", "10.96.0.22", null, port("web", 8080), port("http", 8081));
    service("several", "ClusterIP", "10.96.0.23", null, port("web", 8080), port("admin", 9000));
  }

  private static ServicePort port(String name, int port) {
    return new ServicePortBuilder().withName(name).withPort(port).build();
  }

  private void service(String name, String type, String clusterIp, String externalName, ServicePort... ports) {
    client.services().inNamespace(NS).resource(new ServiceBuilder()
        .withNewMetadata().withName(name).endMetadata()
        .withNewSpec().withType(type).withClusterIP(clusterIp).withExternalName(externalName).withPorts(ports).endSpec()
        .build()).create();
  }

  private Resolution resolve(String service, String uri) {
    return destinations.resolve(NS, Optional.of(new ServiceRef("v1", "Service", service)), Optional.ofNullable(uri));
  }

  private static Resolution resolved(String url, String connectHost) {
    return new Resolution.Resolved(URI.create(url), Optional.ofNullable(connectHost));
  }

  @Test
  void theHttpPortOnItsDefaultIsLeftOut() {
    assertThat(resolve("orders", "/orders/cancel?reason=late"))
        .isEqualTo(resolved("http://orders.shop.svc.corp.example/orders/cancel?reason=late", "10.96.0.20"));
    assertThat(resolve("orders", null)).isEqualTo(resolved("http://orders.shop.svc.corp.example", "10.96.0.20"));
  }

  @Test
  void theOnlyPortOrThePortNamedHttp() {
    assertThat(resolve("billing", "/x")).isEqualTo(resolved("http://billing.shop.svc.corp.example:8443/x", "10.96.0.21"));
    assertThat(resolve("node", "/x")).isEqualTo(resolved("http://node.shop.svc.corp.example:8081/x", "10.96.0.22"));
  }

  @Test
  void aHeadlessServiceResolvesByItsDnsName() {
    assertThat(resolve("headless", "/")).isEqualTo(resolved("http://headless.shop.svc.corp.example:8080/", null));
  }

  @Test
  void anExternalNameServiceConnectsToItsExternalName() {
    assertThat(resolve("external", "/hook")).isEqualTo(resolved("http://external.shop.svc.corp.example/hook",
        "hooks.example.com"));
  }

  @Test
  void severalPortsNoneNamedHttpIsNotRetried() {
    assertThat(resolve("several", "/")).isEqualTo(new Resolution.Unresolvable("Service several in namespace shop "
        + "has several ports and none named http: name the one to deliver to http", false));
  }

  @Test
  void aMissingServiceMayAppearLater() {
    assertThat(resolve("absent", "/")).isEqualTo(new Resolution.Unresolvable(
        "Service absent not found in namespace shop", true));
  }

  @Test
  void withARefTheUriIsAPath() {
    assertThat(resolve("orders", "orders/cancel")).isInstanceOfSatisfying(Resolution.Unresolvable.class, u -> {
      assertThat(u.retryable()).isFalse();
      assertThat(u.message()).contains("must start with '/'");
    });
  }

  @Test
  void anyOtherKindIsResolvedAsAnAddressableAndAKindNotServedIsARetryNamingIt() {
    Resolution resolution = destinations.resolve(NS, Optional.of(new ServiceRef("serving.knative.dev/v1", "Service",
        "orders")), Optional.empty());
    assertThat(resolution).isEqualTo(new Resolution.Unresolvable("the API server serves no kind Service in "
        + "serving.knative.dev/v1: install the CRD (Knative) that defines it, or fix sink.ref", true));
  }

  @Test
  void withoutARefTheUriIsUsedAsIs() {
    assertThat(destinations.resolve(NS, Optional.empty(), Optional.of("https://hooks.example.com/a?b=c")))
        .isEqualTo(resolved("https://hooks.example.com/a?b=c", null));
    assertThat(destinations.resolve(NS, Optional.empty(), Optional.of("/relative")))
        .isInstanceOfSatisfying(Resolution.Unresolvable.class, u -> assertThat(u.retryable()).isFalse());
    assertThat(destinations.resolve(NS, Optional.empty(), Optional.empty()))
        .isEqualTo(new Resolution.Unresolvable("sink needs a ref or a uri", false));
  }
}
