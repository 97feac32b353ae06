package io.delayedtask.operator.sink;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import io.delayedtask.operator.config.SinkConfig;
import io.delayedtask.operator.testing.LoopbackOnlySockets;
import io.delayedtask.operator.testing.Ports;
import io.micrometer.core.instrument.simple.SimpleMeterRegistry;
import java.net.InetAddress;
import java.net.URI;
import java.net.UnknownHostException;
import java.time.Clock;
import java.time.Duration;
import java.time.Instant;
import java.time.ZoneOffset;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import mockwebserver3.Dispatcher;
import mockwebserver3.MockResponse;
import mockwebserver3.MockWebServer;
import mockwebserver3.RecordedRequest;
import mockwebserver3.SocketEffect;
import okhttp3.Headers;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

/**
 * The sender against receivers on 127.0.0.1 (mockwebserver3). Names resolve through a fake resolver
 * and sockets refuse anything but loopback, so no test sends a packet off the machine, even with
 * the guard broken.
 */
class OkHttpSenderTest {
  private static final Instant DUE = Instant.parse("2026-12-03T07:00:00Z");
  private static final Clock CLOCK = Clock.fixed(DUE.plusSeconds(2), ZoneOffset.UTC);
  private static final Duration TIMEOUT = Duration.ofSeconds(5);
  private static final Duration WAIT = Duration.ofSeconds(10);
  private static final String LOOPBACK_RULE =
      "127.0.0.1 is loopback, and no entry of DELAYEDTASK_SINK_ALLOWED_URIS naming a loopback host allowed this URL";

  private final LoopbackOnlySockets sockets = new LoopbackOnlySockets();
  private final SimpleMeterRegistry registry = new SimpleMeterRegistry();
  private final MockWebServer receiver = new MockWebServer();
  private OkHttpSender sender;

  /** Test names only; anything else is unknown, so nothing is ever looked up for real. */
  private static List<InetAddress> resolve(String host) throws UnknownHostException {
    List<String> literals =
        switch (host) {
          case "receiver.test" -> List.of("127.0.0.1");
          case "metadata.test" -> List.of("169.254.169.254");
          case "link-local.test" -> List.of("fe80::1", "169.254.10.10");
          case "unspecified.test" -> List.of("0.0.0.0");
          case "mixed.test" -> List.of("169.254.169.254", "127.0.0.1");
          default -> throw new UnknownHostException(host + " is not a test name");
        };
    List<InetAddress> addresses = new ArrayList<>();
    for (String literal : literals) {
      addresses.add(InetAddress.getByName(literal));
    }
    return addresses;
  }

  @BeforeEach
  void start() throws Exception {
    receiver.start(InetAddress.getByName("127.0.0.1"), 0);
    sender = sender(SinkConfig.defaults());
  }

  private OkHttpSender sender(SinkConfig config) {
    return new OkHttpSender(config, registry, OkHttpSenderTest::resolve, sockets, CLOCK);
  }

  @AfterEach
  void stop() {
    sender.close();
    receiver.close();
    assertThat(sockets.refused()).as("connections attempted off loopback").isEmpty();
  }

  private URI url(String host, String pathAndQuery) {
    return URI.create("http://" + host + ":" + receiver.getPort() + pathAndQuery);
  }

  private static DeliveryRequest.TaskEvent event(
      int attempt, Map<String, String> payload, Map<String, String> extensions) {
    return new DeliveryRequest.TaskEvent(
        "0b5e7c3a-uid." + DUE.toEpochMilli(),
        "/apis/delayedtask.io/v1alpha1/namespaces/shop/delayedtasks/cancel-42",
        DUE,
        attempt,
        payload,
        extensions);
  }

  private static DeliveryRequest request(URI url, boolean loopbackAllowed) {
    return new DeliveryRequest(
        url,
        new Reach.ByName(Optional.empty(), loopbackAllowed, true),
        event(1, Map.of(), Map.of()),
        Optional.empty(),
        Optional.empty(),
        TIMEOUT);
  }

  private static DeliveryResult result(java.util.concurrent.CompletionStage<DeliveryResult> stage)
      throws Exception {
    return stage.toCompletableFuture().get(WAIT.toSeconds(), TimeUnit.SECONDS);
  }

  @Test
  void sendsTheCloudEventInBinaryMode() throws Exception {
    receiver.enqueue(new MockResponse.Builder().code(202).body("secret answer").build());
    DeliveryRequest request =
        new DeliveryRequest(
            url("receiver.test", "/orders/cancel?reason=late"),
            new Reach.ByName(Optional.empty(), true, true),
            event(
                3,
                Map.of("orderId", "42", "customer", "c-7"),
                Map.of(
                    "delayedtaskerrorcode",
                    "503",
                    "delayedtaskerrordest",
                    "http://orders.shop.svc.cluster.local/")),
            Optional.of("t0ken"),
            Optional.empty(),
            TIMEOUT);

    DeliveryResult result = result(sender.send(request));

    assertThat(result)
        .isEqualTo(
            new DeliveryResult.Answered(CLOCK.instant(), result.took(), 202, Optional.empty()));
    RecordedRequest recorded = receiver.takeRequest(1, TimeUnit.SECONDS);
    assertThat(recorded.getMethod()).isEqualTo("POST");
    assertThat(recorded.getTarget()).isEqualTo("/orders/cancel?reason=late");
    assertThat(recorded.getBody().utf8()).isEqualTo("{\"customer\":\"c-7\",\"orderId\":\"42\"}");
    Headers headers = recorded.getHeaders();
    assertThat(headers.values("Content-Type")).containsExactly("application/json");
    assertThat(headers.values("ce-specversion")).containsExactly("1.0");
    assertThat(headers.values("ce-type")).containsExactly("io.delayedtask.task.due");
    assertThat(headers.values("ce-source"))
        .containsExactly("/apis/delayedtask.io/v1alpha1/namespaces/shop/delayedtasks/cancel-42");
    assertThat(headers.values("ce-id")).containsExactly("0b5e7c3a-uid.1796281200000");
    assertThat(headers.values("ce-time")).containsExactly("2026-12-03T07:00:00.000Z");
    assertThat(headers.values("ce-delayedtaskattempt")).containsExactly("3");
    assertThat(headers.values("ce-delayedtaskerrorcode")).containsExactly("503");
    assertThat(headers.values("ce-delayedtaskerrordest"))
        .containsExactly("http://orders.shop.svc.cluster.local/");
    assertThat(headers.values("Authorization")).containsExactly("Bearer t0ken");
    assertThat(headers.values("Host")).containsExactly("receiver.test:" + receiver.getPort());
    assertThat(headers.names().stream().filter(name -> name.toLowerCase().startsWith("ce-")))
        .containsExactlyInAnyOrder(
            "ce-specversion",
            "ce-type",
            "ce-source",
            "ce-id",
            "ce-time",
            "ce-delayedtaskattempt",
            "ce-delayedtaskerrorcode",
            "ce-delayedtaskerrordest");
  }

  @Test
  void dataIsTheBodyVerbatimWithItsContentTypeAndOverridesAreExtensionsTheSdkReadsBack()
      throws Exception {
    receiver.enqueue(new MockResponse.Builder().code(200).build());
    String xml = "<order id=\"42\">caf\u00e9</order>";
    DeliveryRequest.TaskEvent event =
        new DeliveryRequest.TaskEvent(
            "0b5e7c3a-uid." + DUE.toEpochMilli(),
            "/apis/delayedtask.io/v1alpha1/namespaces/shop/delayedtasks/cancel-42",
            DUE,
            1,
            Map.of("ignored", "x"),
            Optional.of(new DeliveryRequest.Data("application/xml", xml)),
            Map.of("team", "orders", "region", "eu1"));
    result(
        sender.send(
            new DeliveryRequest(
                url("receiver.test", "/"),
                new Reach.ByName(Optional.empty(), true, true),
                event,
                Optional.empty(),
                Optional.empty(),
                TIMEOUT)));

    RecordedRequest recorded = receiver.takeRequest(1, TimeUnit.SECONDS);
    assertThat(recorded.getBody().toByteArray())
        .isEqualTo(xml.getBytes(java.nio.charset.StandardCharsets.UTF_8));
    assertThat(recorded.getHeaders().values("Content-Type")).containsExactly("application/xml");
    java.util.Map<String, String> headers = new java.util.TreeMap<>();
    recorded.getHeaders().forEach(pair -> headers.put(pair.getFirst(), pair.getSecond()));
    io.cloudevents.core.message.MessageReader reader =
        io.cloudevents.http.HttpMessageFactory.createReader(
            headers, recorded.getBody().toByteArray());
    assertThat(reader.getEncoding()).isEqualTo(io.cloudevents.core.message.Encoding.BINARY);
    io.cloudevents.CloudEvent read = reader.toEvent();
    assertThat(read.getDataContentType()).isEqualTo("application/xml");
    assertThat(read.getData().toBytes())
        .isEqualTo(xml.getBytes(java.nio.charset.StandardCharsets.UTF_8));
    assertThat(read.getExtension("team")).isEqualTo("orders");
    assertThat(read.getExtension("region")).isEqualTo("eu1");
    assertThat(read.getExtension("delayedtaskattempt")).isEqualTo("1");
    assertThat(read.getType()).isEqualTo("io.delayedtask.task.due");
  }

  @Test
  void anEmptyPayloadIsAnEmptyObjectAndNoTokenNoAuthorization() throws Exception {
    receiver.enqueue(new MockResponse.Builder().code(200).build());
    result(sender.send(request(url("receiver.test", "/"), true)));
    RecordedRequest recorded = receiver.takeRequest(1, TimeUnit.SECONDS);
    assertThat(recorded.getBody().utf8()).isEqualTo("{}");
    assertThat(recorded.getHeaders().get("Authorization")).isNull();
  }

  @Test
  void aTimeWithMillisecondsKeepsThem() {
    DeliveryRequest.TaskEvent withMillis =
        new DeliveryRequest.TaskEvent(
            "id", "/s", Instant.parse("2026-12-03T07:00:00.120Z"), 1, Map.of(), Map.of());
    assertThat(CloudEventMessage.of(withMillis).headers())
        .containsEntry("ce-time", "2026-12-03T07:00:00.120Z");
  }

  @ParameterizedTest(name = "{0}")
  @ValueSource(ints = {200, 204, 400, 404, 503})
  void reportsTheStatusCode(int status) throws Exception {
    MockResponse.Builder answer = new MockResponse.Builder().code(status);
    receiver.enqueue(status == 204 ? answer.build() : answer.body("not to be read").build());
    DeliveryResult result = result(sender.send(request(url("receiver.test", "/"), true)));
    assertThat(result)
        .isInstanceOfSatisfying(
            DeliveryResult.Answered.class,
            answered -> {
              assertThat(answered.status()).isEqualTo(status);
              assertThat(answered.retryAfter()).isEmpty();
            });
  }

  @Test
  void neverFollowsARedirect() throws Exception {
    try (MockWebServer elsewhere = new MockWebServer()) {
      elsewhere.start(InetAddress.getByName("127.0.0.1"), 0);
      receiver.enqueue(
          new MockResponse.Builder()
              .code(302)
              .setHeader("Location", "http://127.0.0.1:" + elsewhere.getPort() + "/stolen")
              .build());

      DeliveryResult result = result(sender.send(request(url("receiver.test", "/"), true)));

      assertThat(result)
          .isInstanceOfSatisfying(
              DeliveryResult.Answered.class,
              answered -> assertThat(answered.status()).isEqualTo(302));
      assertThat(elsewhere.getRequestCount()).isZero();
    }
  }

  @Test
  void readsRetryAfterInSecondsAndAsADate() throws Exception {
    receiver.enqueue(new MockResponse.Builder().code(429).setHeader("Retry-After", "3").build());
    receiver.enqueue(
        new MockResponse.Builder()
            .code(503)
            .setHeader("Retry-After", "Thu, 03 Dec 2026 07:01:02 GMT")
            .build());

    DeliveryResult seconds = result(sender.send(request(url("receiver.test", "/"), true)));
    DeliveryResult date = result(sender.send(request(url("receiver.test", "/"), true)));

    assertThat(((DeliveryResult.Answered) seconds).retryAfter()).contains(Duration.ofSeconds(3));
    // The clock reads 07:00:02.
    assertThat(((DeliveryResult.Answered) date).retryAfter()).contains(Duration.ofSeconds(60));
  }

  @Test
  void aReceiverThatNeverAnswersIsCutByTheTimeout() throws Exception {
    receiver.enqueue(
        new MockResponse.Builder().onResponseStart(SocketEffect.Stall.INSTANCE).build());
    Duration timeout = Duration.ofMillis(700);
    DeliveryRequest request =
        new DeliveryRequest(
            url("receiver.test", "/"),
            new Reach.ByName(Optional.empty(), true, true),
            event(1, Map.of(), Map.of()),
            Optional.empty(),
            Optional.empty(),
            timeout);

    long started = System.nanoTime();
    DeliveryResult result = result(sender.send(request));
    Duration elapsed = Duration.ofNanos(System.nanoTime() - started);

    assertThat(result)
        .isInstanceOfSatisfying(
            DeliveryResult.NoAnswer.class,
            noAnswer -> assertThat(noAnswer.why()).isEqualTo("no answer within 700ms"));
    assertThat(elapsed).isBetween(timeout.minusMillis(50), timeout.plusSeconds(2));
    assertThat(result.took()).isBetween(timeout.minusMillis(50), timeout.plusSeconds(2));
  }

  @Test
  void aClosedPortIsConnectionRefused() throws Exception {
    int closedPort = Ports.freePort();
    DeliveryResult result =
        result(sender.send(request(URI.create("http://127.0.0.1:" + closedPort + "/"), true)));
    assertThat(result)
        .isInstanceOfSatisfying(
            DeliveryResult.NoAnswer.class,
            noAnswer -> assertThat(noAnswer.why()).isEqualTo("connection refused"));
  }

  @Test
  void keepsAtMostMaxInFlightPerHostOpenAndNeverBlocksTheCaller() throws Exception {
    sender.close();
    sender = sender(new SinkConfig(List.of(), "cluster.local", "delayedtask-sender", 256, 2));
    CountDownLatch release = new CountDownLatch(1);
    AtomicInteger open = new AtomicInteger();
    AtomicInteger mostOpen = new AtomicInteger();
    receiver.setDispatcher(
        new Dispatcher() {
          @Override
          public MockResponse dispatch(RecordedRequest request) throws InterruptedException {
            mostOpen.accumulateAndGet(open.incrementAndGet(), Math::max);
            try {
              release.await(WAIT.toSeconds(), TimeUnit.SECONDS);
              return new MockResponse.Builder().code(200).build();
            } finally {
              open.decrementAndGet();
            }
          }
        });

    long started = System.nanoTime();
    List<CompletableFuture<DeliveryResult>> stages = new ArrayList<>();
    for (int i = 0; i < 6; i++) {
      // Two namespaces: one namespace holds at most half of a host's slots (DeliverySlotsTest).
      stages.add(
          sender
              .send(requestOf("ns-" + i % 2, url("receiver.test", "/" + i), TIMEOUT))
              .toCompletableFuture());
    }
    Duration sending = Duration.ofNanos(System.nanoTime() - started);

    assertThat(sending).isLessThan(Duration.ofSeconds(1));
    assertThat(stages).noneMatch(CompletableFuture::isDone);
    await().atMost(WAIT).until(() -> open.get() == 2);
    // Give a third request every chance to arrive; it must not.
    await().during(Duration.ofMillis(500)).atMost(WAIT).until(() -> open.get() <= 2);
    release.countDown();
    for (CompletableFuture<DeliveryResult> stage : stages) {
      assertThat(result(stage)).isInstanceOf(DeliveryResult.Answered.class);
    }
    assertThat(mostOpen.get()).isEqualTo(2);
  }

  /** A request of a task in {@code namespace}, with its own timeout. */
  private static DeliveryRequest requestOf(String namespace, URI url, Duration timeout) {
    DeliveryRequest.TaskEvent event =
        new DeliveryRequest.TaskEvent(
            "uid." + DUE.toEpochMilli(),
            "/apis/delayedtask.io/v1alpha1/namespaces/" + namespace + "/delayedtasks/t",
            DUE,
            1,
            Map.of(),
            Map.of());
    return new DeliveryRequest(
        url,
        new Reach.ByName(Optional.empty(), true, true),
        event,
        Optional.empty(),
        Optional.empty(),
        timeout);
  }

  /**
   * Three namespaces whose receiver never answers cannot hold more than their cap each, nor take
   * the slots kept for lightly loaded namespaces: a fourth namespace's delivery is answered at once
   * while they hang, though together they would fill the whole pool (6).
   */
  @Test
  void namespacesWhoseReceiversHangDoNotDelayAnotherNamespacesDelivery() throws Exception {
    sender.close();
    sender = sender(new SinkConfig(List.of(), "cluster.local", "delayedtask-sender", 6, 256, 2));
    CountDownLatch release = new CountDownLatch(1);
    Map<String, AtomicInteger> open = new java.util.concurrent.ConcurrentHashMap<>();
    Map<String, AtomicInteger> mostOpen = new java.util.concurrent.ConcurrentHashMap<>();
    receiver.setDispatcher(
        new Dispatcher() {
          @Override
          public MockResponse dispatch(RecordedRequest request) throws InterruptedException {
            if (!request.getUrl().encodedPath().startsWith("/hang")) {
              return new MockResponse.Builder().code(200).build();
            }
            String namespace = request.getHeaders().get("ce-source").split("/")[5];
            int now = open.computeIfAbsent(namespace, n -> new AtomicInteger()).incrementAndGet();
            mostOpen
                .computeIfAbsent(namespace, n -> new AtomicInteger())
                .accumulateAndGet(now, Math::max);
            try {
              release.await(WAIT.toSeconds() * 3, TimeUnit.SECONDS);
              return new MockResponse.Builder().code(200).build();
            } finally {
              open.get(namespace).decrementAndGet();
            }
          }
        });
    List<CompletableFuture<DeliveryResult>> hanging = new ArrayList<>();
    for (String namespace : List.of("hung-a", "hung-b", "hung-c")) {
      for (int i = 0; i < 3; i++) {
        hanging.add(
            sender
                .send(requestOf(namespace, url("receiver.test", "/hang"), WAIT.multipliedBy(2)))
                .toCompletableFuture());
      }
      await()
          .atMost(WAIT)
          .until(() -> open.containsKey(namespace) && open.get(namespace).get() >= 1);
    }
    await()
        .atMost(WAIT)
        .until(() -> open.values().stream().mapToInt(AtomicInteger::get).sum() >= 5);

    long started = System.nanoTime();
    DeliveryResult shop =
        result(sender.send(requestOf("shop", url("receiver.test", "/fast"), TIMEOUT)));
    Duration took = Duration.ofNanos(System.nanoTime() - started);

    try {
      assertThat(shop)
          .isInstanceOfSatisfying(
              DeliveryResult.Answered.class, a -> assertThat(a.status()).isEqualTo(200));
      assertThat(took)
          .as("not held back by the hanging namespaces")
          .isLessThan(Duration.ofSeconds(2));
      assertThat(hanging).noneMatch(CompletableFuture::isDone);
      assertThat(mostOpen)
          .allSatisfy(
              (namespace, most) -> assertThat(most.get()).as(namespace).isLessThanOrEqualTo(2));
    } finally {
      release.countDown();
    }
    for (CompletableFuture<DeliveryResult> stage : hanging) {
      assertThat(result(stage)).isInstanceOf(DeliveryResult.Answered.class);
    }
  }

  /**
   * A request that finds no slot waits at most its timeout, then fails as unanswered (retried by
   * the policy), instead of waiting in OkHttp's queue for as long as the open one takes.
   */
  @Test
  void aRequestThatWaitedForASlotPastItsTimeoutFailsAsUnansweredAndIsRetried() throws Exception {
    sender.close();
    sender = sender(new SinkConfig(List.of(), "cluster.local", "delayedtask-sender", 1, 1, 1));
    CountDownLatch release = new CountDownLatch(1);
    receiver.setDispatcher(
        new Dispatcher() {
          @Override
          public MockResponse dispatch(RecordedRequest request) throws InterruptedException {
            release.await(WAIT.toSeconds(), TimeUnit.SECONDS);
            return new MockResponse.Builder().code(200).build();
          }
        });
    CompletableFuture<DeliveryResult> first =
        sender.send(requestOf("shop", url("receiver.test", "/1"), WAIT)).toCompletableFuture();

    long started = System.nanoTime();
    DeliveryResult second =
        sender
            .send(requestOf("shop", url("receiver.test", "/2"), Duration.ofMillis(300)))
            .toCompletableFuture()
            .get(3, TimeUnit.SECONDS);
    Duration took = Duration.ofNanos(System.nanoTime() - started);

    try {
      assertThat(second)
          .isInstanceOfSatisfying(
              DeliveryResult.NoAnswer.class,
              noAnswer ->
                  assertThat(noAnswer.why())
                      .startsWith(
                          "no answer within 300ms (it waited that long for one of the operator's delivery slots"));
      assertThat(RetryPolicy.verdict(second)).isEqualTo(RetryPolicy.Verdict.RETRY);
      assertThat(took).isBetween(Duration.ofMillis(250), Duration.ofSeconds(2));
      assertThat(first).isNotDone();
    } finally {
      release.countDown();
    }
    assertThat(result(first)).isInstanceOf(DeliveryResult.Answered.class);
  }

  @Test
  void aHeaderValueWithALineBreakIsNamedNeverRepeated() throws Exception {
    DeliveryRequest request =
        new DeliveryRequest(
            url("receiver.test", "/"),
            new Reach.ByName(Optional.empty(), true, true),
            event(1, Map.of(), Map.of("team", "orders\r\nFORGED log line")),
            Optional.empty(),
            Optional.empty(),
            TIMEOUT);
    DeliveryResult result = result(sender.send(request));
    assertThat(result)
        .isInstanceOfSatisfying(
            DeliveryResult.Forbidden.class,
            forbidden -> {
              assertThat(forbidden.rule())
                  .isEqualTo(
                      "the header ce-team has a value HTTP does not allow (a line break, another "
                          + "control character or a character outside ASCII); the value is not shown");
              assertThat(forbidden.rule()).doesNotContain("FORGED", "orders");
            });
    assertThat(receiver.getRequestCount()).isZero();
  }

  @Test
  void aNameForAMetadataAddressIsForbidden() throws Exception {
    DeliveryResult result =
        result(sender.send(request(URI.create("http://metadata.test/latest/meta-data/"), true)));
    assertThat(result)
        .isInstanceOfSatisfying(
            DeliveryResult.Forbidden.class,
            forbidden ->
                assertThat(forbidden.rule())
                    .isEqualTo("169.254.169.254 is link-local (cloud metadata)"));
  }

  @Test
  void aConnectHostIsCheckedNotTheUrlsHost() throws Exception {
    DeliveryRequest viaService =
        new DeliveryRequest(
            url("receiver.test", "/"),
            new Reach.ByName(Optional.of("link-local.test"), true, true),
            event(1, Map.of(), Map.of()),
            Optional.empty(),
            Optional.empty(),
            TIMEOUT);
    assertThat(result(sender.send(viaService)))
        .isInstanceOfSatisfying(
            DeliveryResult.Forbidden.class,
            forbidden -> assertThat(forbidden.rule()).isEqualTo("fe80::1 is link-local"));
  }

  @Test
  void anUnspecifiedAddressIsForbidden() throws Exception {
    assertThat(result(sender.send(request(url("unspecified.test", "/"), true))))
        .isInstanceOfSatisfying(
            DeliveryResult.Forbidden.class,
            forbidden -> assertThat(forbidden.rule()).isEqualTo("0.0.0.0 is unspecified"));
  }

  @Test
  void forbiddenAddressesAreDroppedAndTheOthersUsed() throws Exception {
    receiver.enqueue(new MockResponse.Builder().code(200).build());
    DeliveryResult result = result(sender.send(request(url("mixed.test", "/"), true)));
    assertThat(result)
        .isInstanceOfSatisfying(
            DeliveryResult.Answered.class,
            answered -> assertThat(answered.status()).isEqualTo(200));
  }

  @Test
  void loopbackIsForbiddenUnlessAllowed() throws Exception {
    DeliveryResult byName = result(sender.send(request(url("receiver.test", "/"), false)));
    DeliveryResult byLiteral = result(sender.send(request(url("127.0.0.1", "/"), false)));
    assertThat(byName)
        .isEqualTo(new DeliveryResult.Forbidden(CLOCK.instant(), byName.took(), LOOPBACK_RULE));
    assertThat(byLiteral)
        .isEqualTo(new DeliveryResult.Forbidden(CLOCK.instant(), byLiteral.took(), LOOPBACK_RULE));
    assertThat(receiver.getRequestCount()).isZero();
  }

  @ParameterizedTest(name = "{0}")
  @ValueSource(
      strings = {
        "http://169.254.169.254/latest/",
        "http://[::ffff:169.254.169.254]/",
        "http://[fe80::1]:8080/",
        "http://0.0.0.0:8080/",
        "https://100.100.100.200/",
        "http://168.63.129.16/",
        "http://[64:ff9b:1::a9fe:a9fe]/",
        "http://[::ffff:0:a9fe:a9fe]/",
        "http://[2001:0:4136:e378:8000:63bf:5601:5601]/"
      })
  void ipLiteralHostsAreCheckedOnConnect(String url) throws Exception {
    DeliveryResult result = result(sender.send(request(URI.create(url), true)));
    assertThat(result).isInstanceOf(DeliveryResult.Forbidden.class);
    assertThat(((DeliveryResult.Forbidden) result).rule())
        .containsAnyOf("link-local", "unspecified", "metadata");
  }

  @Test
  void closingCompletesWhatIsInFlightAndRefusesMore() throws Exception {
    receiver.enqueue(
        new MockResponse.Builder().onResponseStart(SocketEffect.Stall.INSTANCE).build());
    CompletableFuture<DeliveryResult> inFlight =
        sender.send(request(url("receiver.test", "/"), true)).toCompletableFuture();
    receiver.takeRequest(5, TimeUnit.SECONDS);

    sender.close();

    assertThat(result(inFlight))
        .isInstanceOfSatisfying(
            DeliveryResult.NoAnswer.class,
            noAnswer -> assertThat(noAnswer.why()).isEqualTo("canceled"));
    assertThat(result(sender.send(request(url("receiver.test", "/"), true))))
        .isInstanceOf(DeliveryResult.NoAnswer.class);
  }

  @Test
  void recordsHowLongRequestsTook() throws Exception {
    receiver.enqueue(new MockResponse.Builder().code(200).build());
    receiver.enqueue(new MockResponse.Builder().code(503).build());
    result(sender.send(request(url("receiver.test", "/"), true)));
    result(sender.send(request(url("receiver.test", "/"), true)));
    assertThat(registry.get(OkHttpSender.DURATION).tag("outcome", "delivered").timer().count())
        .isEqualTo(1);
    assertThat(registry.get(OkHttpSender.DURATION).tag("outcome", "retry").timer().count())
        .isEqualTo(1);
  }
}
