package io.delayedtask.operator.sink;

import static org.assertj.core.api.Assertions.assertThat;

import io.delayedtask.operator.config.SinkConfig;
import io.fabric8.kubernetes.api.model.ObjectReference;
import io.fabric8.kubernetes.api.model.ObjectReferenceBuilder;
import io.fabric8.kubernetes.api.model.ServicePortBuilder;
import io.fabric8.kubernetes.api.model.discovery.v1.EndpointBuilder;
import io.fabric8.kubernetes.api.model.discovery.v1.EndpointSliceBuilder;
import io.micrometer.core.instrument.simple.SimpleMeterRegistry;
import java.io.IOException;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.net.Socket;
import java.net.SocketAddress;
import java.net.URI;
import java.net.UnknownHostException;
import java.time.Clock;
import java.time.Duration;
import java.time.Instant;
import java.time.ZoneOffset;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import javax.net.SocketFactory;
import mockwebserver3.Dispatcher;
import mockwebserver3.MockResponse;
import mockwebserver3.MockWebServer;
import mockwebserver3.RecordedRequest;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

/**
 * A Service of the task's namespace dialled by the sender at its endpoints verified when it
 * connects. Pod addresses are stood in for by receivers on loopback ({@link StandIns}): a
 * connection to a stood-in address goes to that receiver, any other is refused, so no packet leaves
 * the machine. The end-to-end proof on a real API server is {@code SinkReachIT}.
 */
class ServiceEndpointsDialTest {
  private static final Instant DUE = Instant.parse("2026-12-03T07:00:00Z");
  private static final Duration WAIT = Duration.ofSeconds(10);
  private static final String NS = "shop";

  private final DestinationsTest.Directory directory = new DestinationsTest.Directory();
  private final StandIns sockets = new StandIns();
  private final MockWebServer pod = new MockWebServer();
  private final MockWebServer victim = new MockWebServer();
  private final MockWebServer holder = new MockWebServer();
  private OkHttpSender sender;

  /**
   * Sockets that connect a stood-in address (any port) to a loopback receiver, and refuse the rest.
   */
  static final class StandIns extends SocketFactory {
    final Map<InetAddress, Integer> to = new ConcurrentHashMap<>();
    final List<SocketAddress> connected = new CopyOnWriteArrayList<>();

    void standIn(String ip, MockWebServer receiver) throws UnknownHostException {
      to.put(InetAddress.getByName(ip), receiver.getPort());
    }

    @Override
    public Socket createSocket() {
      return new Socket() {
        @Override
        public void connect(SocketAddress endpoint, int timeout) throws IOException {
          InetAddress address = ((InetSocketAddress) endpoint).getAddress();
          connected.add(endpoint);
          if (address.isLoopbackAddress()) {
            super.connect(endpoint, timeout);
          } else if (to.containsKey(address)) {
            super.connect(
                new InetSocketAddress(InetAddress.getLoopbackAddress(), to.get(address)), timeout);
          } else {
            throw new IOException(
                "test sockets connect to loopback and stand-ins only, not " + endpoint);
          }
        }
      };
    }

    @Override
    public Socket createSocket(String host, int port) {
      throw new UnsupportedOperationException();
    }

    @Override
    public Socket createSocket(String host, int port, InetAddress localHost, int localPort) {
      throw new UnsupportedOperationException();
    }

    @Override
    public Socket createSocket(InetAddress host, int port) {
      throw new UnsupportedOperationException();
    }

    @Override
    public Socket createSocket(
        InetAddress address, int port, InetAddress localAddress, int localPort) {
      throw new UnsupportedOperationException();
    }
  }

  @BeforeEach
  void start() throws Exception {
    for (MockWebServer server : List.of(pod, victim, holder)) {
      server.start(InetAddress.getByName("127.0.0.1"), 0);
    }
    // One slot for the namespace: a second request waits for it.
    sender =
        new OkHttpSender(
            new SinkConfig(List.of(), "cluster.local", "delayedtask-sender", 8, 8, 1),
            new SimpleMeterRegistry(),
            host -> {
              throw new UnknownHostException(host + ": no name is resolved in this test");
            },
            sockets,
            Clock.fixed(DUE, ZoneOffset.UTC));
    directory.service(
        "orders",
        "ClusterIP",
        "10.96.0.20",
        null,
        new ServicePortBuilder().withName("http").withPort(80).build());
  }

  @AfterEach
  void stop() throws Exception {
    sender.close();
    for (MockWebServer server : List.of(pod, victim, holder)) {
      server.close();
    }
  }

  private void slice(String name, String address, ObjectReference target) {
    directory.slices.add(
        new EndpointSliceBuilder()
            .withNewMetadata()
            .withName(name)
            .withNamespace(NS)
            .withLabels(Map.of("kubernetes.io/service-name", "orders"))
            .endMetadata()
            .withAddressType("IPv4")
            .addNewPort()
            .withName("http")
            .withPort(8080)
            .withProtocol("TCP")
            .endPort()
            .withEndpoints(
                new EndpointBuilder().withAddresses(address).withTargetRef(target).build())
            .build());
  }

  private static ObjectReference podRef(String namespace, String name) {
    return new ObjectReferenceBuilder()
        .withKind("Pod")
        .withNamespace(namespace)
        .withName(name)
        .build();
  }

  private static DeliveryRequest request(URI url, Reach reach) {
    return new DeliveryRequest(
        url,
        reach,
        new DeliveryRequest.TaskEvent(
            "uid." + DUE.toEpochMilli(),
            "/apis/delayedtask.io/v1alpha1/namespaces/" + NS + "/delayedtasks/t",
            DUE,
            1,
            Map.of(),
            Map.of()),
        Optional.empty(),
        Optional.empty(),
        Duration.ofSeconds(5));
  }

  private DeliveryRequest toOrders() {
    return request(
        URI.create("http://orders.shop.svc.cluster.local/cancel"),
        new Reach.ServiceEndpoints(directory, NS, "orders", "http"));
  }

  @Test
  void aServiceIsDialledAtItsVerifiedEndpointOnItsPortWithItsNameAsHost() throws Exception {
    directory.runningPod("orders-1", "10.244.1.5");
    slice("orders-a", "10.244.1.5", podRef(NS, "orders-1"));
    sockets.standIn("10.244.1.5", pod);
    pod.enqueue(new MockResponse.Builder().code(200).build());

    DeliveryResult result =
        sender.send(toOrders()).toCompletableFuture().get(WAIT.toSeconds(), TimeUnit.SECONDS);

    assertThat(result).isInstanceOf(DeliveryResult.Answered.class);
    RecordedRequest received = pod.takeRequest(5, TimeUnit.SECONDS);
    assertThat(received.getHeaders().get("Host")).isEqualTo("orders.shop.svc.cluster.local");
    assertThat(sockets.connected)
        .containsExactly(new InetSocketAddress(InetAddress.getByName("10.244.1.5"), 8080));
  }

  @Test
  void anEndpointAddedWhileTheAttemptWaitsForASlotIsJudgedBeforeItIsDialled() throws Exception {
    CountDownLatch release = new CountDownLatch(1);
    holder.setDispatcher(
        new Dispatcher() {
          @Override
          public MockResponse dispatch(RecordedRequest request) throws InterruptedException {
            release.await(WAIT.toSeconds(), TimeUnit.SECONDS);
            return new MockResponse.Builder().code(200).build();
          }
        });
    CompletableFuture<DeliveryResult> holding =
        sender
            .send(
                request(
                    URI.create("http://127.0.0.1:" + holder.getPort() + "/hold"),
                    new Reach.ByName(Optional.empty(), true, true)))
            .toCompletableFuture();
    assertThat(holder.takeRequest(5, TimeUnit.SECONDS))
        .as("the namespace's one slot is held")
        .isNotNull();
    // No endpoint yet: the Service resolves. The attempt waits for the slot.
    CompletableFuture<DeliveryResult> attempt = sender.send(toOrders()).toCompletableFuture();

    // Meanwhile a hand-made slice points the Service at another namespace's Pod (kube-proxy would
    // follow it).
    slice("orders-by-hand", "10.244.9.9", podRef("payments", "refunds-1"));
    sockets.standIn("10.244.9.9", victim);
    sockets.standIn("10.96.0.20", victim);
    release.countDown();

    DeliveryResult result = attempt.get(WAIT.toSeconds(), TimeUnit.SECONDS);
    assertThat(result)
        .isInstanceOfSatisfying(
            DeliveryResult.Forbidden.class,
            forbidden ->
                assertThat(forbidden.rule())
                    .contains(
                        "a sink.ref reaches only the task's namespace: Service orders lists 10.244.9.9",
                        "not a Pod of namespace shop"));
    assertThat(victim.getRequestCount()).as("the victim received nothing").isZero();
    assertThat(holding.get(WAIT.toSeconds(), TimeUnit.SECONDS))
        .isInstanceOf(DeliveryResult.Answered.class);
  }
}
