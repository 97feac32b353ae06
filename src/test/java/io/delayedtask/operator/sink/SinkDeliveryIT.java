package io.delayedtask.operator.sink;

import static io.delayedtask.operator.testing.Tasks.create;
import static io.delayedtask.operator.testing.Tasks.get;
import static io.delayedtask.operator.testing.Tasks.phase;
import static io.delayedtask.operator.testing.Tasks.rfc3339;
import static io.delayedtask.operator.testing.Tasks.task;
import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import io.delayedtask.operator.api.v1alpha1.DelayedTask;
import io.delayedtask.operator.api.v1alpha1.DelayedTaskSpec;
import io.delayedtask.operator.api.v1alpha1.DeliverySpec;
import io.delayedtask.operator.api.v1alpha1.Destination;
import io.delayedtask.operator.api.v1alpha1.Phase;
import io.delayedtask.operator.api.v1alpha1.ServiceReference;
import io.delayedtask.operator.config.SinkConfig;
import io.delayedtask.operator.task.time.Times;
import io.delayedtask.operator.testing.Events;
import io.delayedtask.operator.testing.LogCapture;
import io.delayedtask.operator.testing.OperatorFixture;
import io.delayedtask.operator.testing.OperatorHttp;
import io.delayedtask.operator.testing.Ports;
import io.delayedtask.operator.testing.RealKubernetes;
import io.delayedtask.operator.testing.Receiver;
import io.delayedtask.operator.testing.Receiver.Answer;
import io.delayedtask.operator.testing.RequiresRealKubernetes;
import io.fabric8.kubernetes.api.model.Event;
import io.fabric8.kubernetes.api.model.ServiceAccountBuilder;
import io.fabric8.kubernetes.api.model.ServiceBuilder;
import io.fabric8.kubernetes.api.model.authentication.TokenReview;
import io.fabric8.kubernetes.api.model.authentication.TokenReviewBuilder;
import io.fabric8.kubernetes.client.KubernetesClient;
import io.fabric8.kubernetes.client.utils.Serialization;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.function.Consumer;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

/**
 * A sink task end to end: the operator in-process on a real API server and a real Redis, delivering
 * to a real HTTP server on 127.0.0.1 (the only address any of these tests reaches), allowed by the
 * entries naming each receiver's origin. What the receiver records, on its own clock, is the proof.
 */
@RequiresRealKubernetes
class SinkDeliveryIT {
  private static final Duration TIMEOUT = Duration.ofSeconds(30);

  private static RealKubernetes kube;
  private static KubernetesClient client;
  private static OperatorFixture.OnRealKubernetes world;
  private static String ns;
  private static Receiver receiver;
  private static Receiver hanging;
  private static Receiver tls;

  /** A loopback port nothing listens on (a sink that never answers), allowed like the receivers. */
  private static int nobody;

  @BeforeAll
  static void start() {
    receiver = Receiver.start();
    hanging = Receiver.start();
    tls = Receiver.startHttps();
    nobody = Ports.freePort();
    kube = RealKubernetes.shared();
    client = kube.client();
    // Each receiver's origin, and the URL the ExternalName "orders" (localhost, the receiver's
    // port) yields.
    world =
        OperatorFixture.startOnRealKubernetes(
            kube,
            "sink",
            Map.of(
                SinkConfig.ALLOWED_URIS,
                String.join(
                    ",",
                    receiver.base(),
                    hanging.base(),
                    tls.base(),
                    "http://localhost:" + receiver.port() + "/orders/",
                    "http://127.0.0.1:" + nobody)));
    ns = world.namespace();
  }

  @AfterAll
  static void stop() {
    if (world != null) {
      world.close();
    }
    for (Receiver started : new Receiver[] {receiver, hanging, tls}) {
      if (started != null) {
        started.close();
      }
    }
  }

  @Test
  void aDeliveredTaskSendsOneCloudEventWithEveryHeaderAndSucceeds() {
    Instant due = Instant.now().plusSeconds(2);
    DelayedTask created =
        create(
            client,
            sinkTask("delivered", due, "/delivered", s -> s.setPayload(Map.of("orderId", "42"))));

    await()
        .atMost(TIMEOUT)
        .until(() -> phase(client, ns, "delivered").orElse(null) == Phase.Succeeded);
    // One, and no other afterwards: a second send would come within the claim's retry or lease.
    await("no second request")
        .during(Duration.ofSeconds(3))
        .atMost(Duration.ofSeconds(10))
        .until(() -> receiver.requestsTo("/delivered").size() == 1);

    List<Receiver.Request> requests = receiver.requestsTo("/delivered");
    assertThat(requests).hasSize(1);
    Receiver.Request request = requests.get(0);
    String uid = created.getMetadata().getUid();
    Instant dueMs = due.truncatedTo(java.time.temporal.ChronoUnit.MILLIS);
    assertThat(request.method()).isEqualTo("POST");
    assertThat(request.at()).as("never before the due time").isAfterOrEqualTo(dueMs);
    assertThat(request.header("content-type")).startsWith("application/json");
    assertThat(request.header("ce-specversion")).isEqualTo("1.0");
    assertThat(request.header("ce-type")).isEqualTo("io.delayedtask.task.due");
    assertThat(request.header("ce-source"))
        .isEqualTo("/apis/delayedtask.io/v1alpha1/namespaces/" + ns + "/delayedtasks/delivered");
    assertThat(request.header("ce-id")).isEqualTo(uid + "." + dueMs.toEpochMilli());
    assertThat(request.header("ce-time")).isEqualTo(Times.format(dueMs));
    assertThat(request.header("ce-delayedtaskattempt")).isEqualTo("1");
    assertThat(request.header("authorization")).as("no token without an audience").isNull();
    assertThat(request.body()).isEqualTo("{\"orderId\":\"42\"}");
    io.cloudevents.CloudEvent event =
        request.event(); // read back by the CloudEvents SDK's HTTP reader
    assertThat(event.getSpecVersion()).isEqualTo(io.cloudevents.SpecVersion.V1);
    assertThat(event.getId()).isEqualTo(uid + "." + dueMs.toEpochMilli());
    assertThat(event.getType()).isEqualTo("io.delayedtask.task.due");
    assertThat(event.getDataContentType()).isEqualTo("application/json");
    assertThat(event.getTime().toInstant()).isEqualTo(dueMs);

    DelayedTask done = get(client, ns, "delivered");
    assertThat(done.getStatus().getSinkUri()).isEqualTo(receiver.base() + "/delivered");
    assertThat(Times.parseOrNull(done.getStatus().getFiredTime())).isAfterOrEqualTo(dueMs);
    assertThat(done.getStatus().getDelivery().getAttempts()).isEqualTo(1);
    assertThat(done.getStatus().getDelivery().getResponseCode()).isEqualTo(200);
    await()
        .atMost(TIMEOUT)
        .until(() -> Events.reasons(client, ns, "delivered").contains("Delivered"));
  }

  @Test
  void dataIsSentVerbatimWithItsContentTypeAndEveryOverrideIsAnExtension() {
    String xml = "<order id=\"42\"><reason>unpaid</reason></order>";
    create(
        client,
        sinkTask(
            "with-data",
            Instant.now(),
            "/with-data",
            s -> {
              s.setPayload(Map.of("ignored", "when data is set"));
              s.setData(xml);
              s.setContentType("application/xml");
              s.setCeOverrides(
                  new io.delayedtask.operator.api.v1alpha1.CeOverrides(
                      Map.of("team", "orders", "region", "eu1")));
            }));
    create(
        client,
        sinkTask(
            "json-data",
            Instant.now(),
            "/json-data",
            s -> s.setData("{\"orderId\": 42, \"items\": [1, 2]}")));

    await()
        .atMost(TIMEOUT)
        .until(
            () ->
                phase(client, ns, "with-data").orElse(null) == Phase.Succeeded
                    && phase(client, ns, "json-data").orElse(null) == Phase.Succeeded);

    io.cloudevents.CloudEvent xmlEvent = receiver.requestsTo("/with-data").get(0).event();
    assertThat(xmlEvent.getDataContentType()).isEqualTo("application/xml");
    assertThat(new String(xmlEvent.getData().toBytes(), java.nio.charset.StandardCharsets.UTF_8))
        .isEqualTo(xml);
    assertThat(xmlEvent.getExtension("team")).isEqualTo("orders");
    assertThat(xmlEvent.getExtension("region")).isEqualTo("eu1");
    assertThat(xmlEvent.getExtension("delayedtaskattempt")).isEqualTo("1");
    assertThat(xmlEvent.getExtensionNames())
        .containsExactlyInAnyOrder("team", "region", "delayedtaskattempt");
    io.cloudevents.CloudEvent jsonEvent = receiver.requestsTo("/json-data").get(0).event();
    assertThat(jsonEvent.getDataContentType()).isEqualTo("application/json");
    assertThat(new String(jsonEvent.getData().toBytes(), java.nio.charset.StandardCharsets.UTF_8))
        .isEqualTo("{\"orderId\": 42, \"items\": [1, 2]}");
    assertThat(get(client, ns, "with-data").getStatus().getSinkUri())
        .isEqualTo(receiver.base() + "/with-data");
  }

  @Test
  void dataThatIsNotJsonUnderAJsonContentTypeIsInvalidNamingTheFieldAndIsNeverSent() {
    create(
        client,
        sinkTask(
            "bad-json",
            Instant.now(),
            "/bad-json",
            s -> {
              s.setData("orderId=42");
              s.setContentType("application/cloudevents+json");
            }));

    await()
        .atMost(TIMEOUT)
        .until(() -> phase(client, ns, "bad-json").orElse(null) == Phase.Invalid);
    assertThat(get(client, ns, "bad-json").getStatus().getMessage())
        .contains(
            "spec.data is not valid JSON, and spec.contentType is application/cloudevents+json");
    assertThat(receiver.requestsTo("/bad-json")).isEmpty();
  }

  @Test
  void twoFailuresThenSuccessAreThreeRequestsWithOneIdSpacedByTheBackoffAndRetryAfter() {
    receiver.answer(
        "/flaky",
        Answer.status(503),
        Answer.status(503).withHeader("Retry-After", "3"),
        Answer.status(200));
    Instant due = Instant.now().plusSeconds(1);
    create(
        client,
        sinkTask(
            "flaky",
            due,
            "/flaky",
            s -> {
              DeliverySpec delivery = new DeliverySpec();
              delivery.setBackoffDelay("1s");
              s.setDelivery(delivery);
            }));

    await()
        .atMost(TIMEOUT)
        .untilAsserted(
            () -> {
              DelayedTask waiting = get(client, ns, "flaky");
              assertThat(waiting.getStatus())
                  .as("a status written")
                  .isNotNull(); // an assertion: awaited, not thrown
              assertThat(waiting.getStatus().getPhase()).isEqualTo(Phase.Running);
              assertThat(waiting.getStatus().getDelivery().getNextAttemptTime()).isNotNull();
            });
    await().atMost(TIMEOUT).until(() -> phase(client, ns, "flaky").orElse(null) == Phase.Succeeded);

    List<Receiver.Request> requests = receiver.requestsTo("/flaky");
    assertThat(requests)
        .extracting(r -> r.header("ce-delayedtaskattempt"))
        .containsExactly("1", "2", "3");
    assertThat(requests)
        .extracting(r -> r.header("ce-id"))
        .containsOnly(requests.get(0).header("ce-id"));
    assertThat(Duration.between(requests.get(0).at(), requests.get(1).at()))
        .as("attempt 2 waits backoffDelay x 2^0")
        .isGreaterThanOrEqualTo(Duration.ofMillis(1000));
    assertThat(Duration.between(requests.get(1).at(), requests.get(2).at()))
        .as("attempt 3 waits at least what Retry-After asked (3 s), more than the backoff's 2 s")
        .isGreaterThanOrEqualTo(Duration.ofMillis(3000));
    DelayedTask flaky = get(client, ns, "flaky");
    assertThat(flaky.getStatus().getDelivery().getAttempts()).isEqualTo(3);
    assertThat(Times.parseOrNull(flaky.getStatus().getFiredTime()))
        .as("firedTime stays at the first attempt")
        .isAfterOrEqualTo(due.truncatedTo(java.time.temporal.ChronoUnit.MILLIS))
        .isBefore(requests.get(1).at());
  }

  @Test
  void aLinearBackoffGrowsByTheDelayNotByDoubling() {
    receiver.answer(
        "/linear",
        Answer.status(503),
        Answer.status(503),
        Answer.status(503),
        Answer.status(503),
        Answer.status(200));
    create(
        client,
        sinkTask(
            "linear",
            Instant.now(),
            "/linear",
            s -> {
              DeliverySpec delivery = new DeliverySpec();
              delivery.setRetry(4);
              delivery.setBackoffPolicy("linear");
              delivery.setBackoffDelay("1s");
              s.setDelivery(delivery);
            }));

    await()
        .atMost(Duration.ofSeconds(60))
        .until(() -> phase(client, ns, "linear").orElse(null) == Phase.Succeeded);

    List<Receiver.Request> requests = receiver.requestsTo("/linear");
    assertThat(requests).hasSize(5);
    // Linear waits 1, 2, 3, 4 s; exponential would wait 1, 2, 4, 8 s. The last gap tells them
    // apart,
    // with 3 s of room for a slow machine.
    assertThat(Duration.between(requests.get(2).at(), requests.get(3).at()))
        .as("attempt 4 waits 1 s x 3")
        .isGreaterThanOrEqualTo(Duration.ofMillis(3000));
    assertThat(Duration.between(requests.get(3).at(), requests.get(4).at()))
        .as("attempt 5 waits 1 s x 4, not 8 s")
        .isBetween(Duration.ofMillis(4000), Duration.ofMillis(7000));
  }

  @Test
  void a400FailsAtOnceWithTheMethodUrlAnswerAndAttemptCount() {
    receiver.answer("/refuses", Answer.status(400));
    create(client, sinkTask("refused", Instant.now(), "/refuses", s -> {}));

    await().atMost(TIMEOUT).until(() -> phase(client, ns, "refused").orElse(null) == Phase.Failed);

    assertThat(receiver.requestsTo("/refuses")).hasSize(1);
    assertThat(get(client, ns, "refused").getStatus().getMessage())
        .isEqualTo("POST " + receiver.base() + "/refuses answered 400 on attempt 1 of 4");
  }

  @Test
  void exhaustedRetriesFailAndTheDeadLetterSinkGetsTheEventWithTheErrorHeaders() {
    receiver.answer("/down", Answer.status(502));
    create(
        client,
        sinkTask(
            "dead-lettered",
            Instant.now(),
            "/down",
            s -> {
              DeliverySpec delivery = new DeliverySpec();
              delivery.setRetry(1);
              delivery.setBackoffDelay("200ms");
              Destination deadLetters = new Destination();
              deadLetters.setUri(receiver.base() + "/dead-letters");
              delivery.setDeadLetterSink(deadLetters);
              s.setDelivery(delivery);
            }));

    await()
        .atMost(TIMEOUT)
        .until(
            () -> {
              DelayedTask task = get(client, ns, "dead-lettered");
              return task.getStatus() != null
                  && task.getStatus().getDelivery() != null
                  && Boolean.TRUE.equals(task.getStatus().getDelivery().getDeadLettered());
            });

    assertThat(receiver.requestsTo("/down")).hasSize(2);
    List<Receiver.Request> deadLetters = receiver.requestsTo("/dead-letters");
    assertThat(deadLetters).hasSize(1);
    assertThat(deadLetters.get(0).header("ce-delayedtaskerrorcode")).isEqualTo("502");
    assertThat(deadLetters.get(0).header("ce-delayedtaskerrordest"))
        .isEqualTo(receiver.base() + "/down");
    assertThat(deadLetters.get(0).header("ce-id"))
        .isEqualTo(receiver.requestsTo("/down").get(0).header("ce-id"));
    DelayedTask task = get(client, ns, "dead-lettered");
    assertThat(task.getStatus().getPhase()).isEqualTo(Phase.Failed);
    assertThat(task.getStatus().getMessage())
        .isEqualTo("POST " + receiver.base() + "/down answered 502 on attempt 2 of 2");
    await()
        .atMost(TIMEOUT)
        .until(() -> Events.reasons(client, ns, "dead-lettered").contains("DeadLettered"));
  }

  @Test
  void aRedirectIsNeverFollowed() {
    receiver.answer(
        "/moved", Answer.status(302).withHeader("Location", receiver.base() + "/elsewhere"));
    create(client, sinkTask("redirected", Instant.now(), "/moved", s -> {}));

    await()
        .atMost(TIMEOUT)
        .until(() -> phase(client, ns, "redirected").orElse(null) == Phase.Failed);

    assertThat(receiver.requestsTo("/elsewhere")).isEmpty();
    assertThat(get(client, ns, "redirected").getStatus().getMessage())
        .contains("answered 302 on attempt 1 of 4");
  }

  @Test
  void aReceiverThatNeverAnswersIsCutByTheTimeoutAndRetried() {
    receiver.answer("/silent", Answer.status(200).after(Duration.ofSeconds(20)));
    create(
        client,
        sinkTask(
            "silent",
            Instant.now(),
            "/silent",
            s -> {
              DeliverySpec delivery = new DeliverySpec();
              delivery.setRetry(1);
              delivery.setTimeout("1s");
              delivery.setBackoffDelay("100ms");
              s.setDelivery(delivery);
            }));

    await().atMost(TIMEOUT).until(() -> phase(client, ns, "silent").orElse(null) == Phase.Failed);

    List<Receiver.Request> requests = receiver.requestsTo("/silent");
    assertThat(requests).hasSize(2);
    // The first attempt is cut at 1 s and the second follows 100 ms later: the 10 s default timeout
    // would put 10 s between them. The upper bound leaves room for a machine ten times slower.
    assertThat(Duration.between(requests.get(0).at(), requests.get(1).at()))
        .as("the second attempt follows the task's 1 s timeout and 100 ms backoff")
        .isBetween(Duration.ofMillis(1000), Duration.ofSeconds(6));
    assertThat(get(client, ns, "silent").getStatus().getMessage())
        .startsWith("POST " + receiver.base() + "/silent got no answer")
        .endsWith("on attempt 2 of 2");
    assertThat(get(client, ns, "silent").getStatus().getDelivery().getResponseCode()).isNull();
  }

  @Test
  void aReceiverThatNeverAnswersHoldsBackNoOtherDelivery() {
    hanging.answer("/hangs", Answer.status(200).after(Duration.ofSeconds(30)));
    {
      Instant due = Instant.now().plusSeconds(4);
      List<String> fast = new ArrayList<>();
      for (int i = 0; i < 5; i++) {
        String name = "hangs-" + i;
        create(
            client,
            task(
                ns,
                name,
                s -> {
                  s.setRunAt(rfc3339(due));
                  Destination sink = new Destination();
                  sink.setUri(hanging.base() + "/hangs");
                  s.setSink(sink);
                  DeliverySpec delivery = new DeliverySpec();
                  delivery.setTimeout("20s");
                  s.setDelivery(delivery);
                }));
      }
      for (int i = 0; i < 50; i++) {
        fast.add(
            create(client, sinkTask("fast-" + i, due, "/fast", s -> {})).getMetadata().getName());
      }

      await()
          .atMost(TIMEOUT)
          .until(
              () ->
                  fast.stream()
                      .allMatch(n -> phase(client, ns, n).orElse(null) == Phase.Succeeded));

      assertThat(hanging.requestsTo("/hangs"))
          .as("the hanging requests were open meanwhile")
          .hasSize(5);
      assertThat(phase(client, ns, "hangs-0"))
          .as("still waiting for its answer")
          .contains(Phase.Scheduled);
      List<Receiver.Request> delivered = receiver.requestsTo("/fast");
      assertThat(delivered).hasSize(50);
      assertThat(delivered)
          .allSatisfy(
              request ->
                  assertThat(
                          Duration.between(
                              Times.parseOrNull(request.header("ce-time")), request.at()))
                      .as(
                          "lag on the receiver's clock, below the hanging receiver's 20 s timeout (room for a slow machine)")
                      .isBetween(Duration.ZERO, Duration.ofSeconds(15)));
    }
  }

  @Test
  void aServiceRefResolvesToTheServiceWithItsPortAndPath() {
    // An ExternalName Service naming localhost: what cluster DNS would give, reachable from this
    // host.
    client
        .services()
        .inNamespace(ns)
        .resource(
            new ServiceBuilder()
                .withNewMetadata()
                .withName("orders")
                .endMetadata()
                .withNewSpec()
                .withType("ExternalName")
                .withExternalName("localhost")
                .addNewPort()
                .withName("http")
                .withPort(receiver.port())
                .endPort()
                .endSpec()
                .build())
        .create();
    create(
        client,
        task(
            ns,
            "to-service",
            s -> {
              s.setRunAt(rfc3339(Instant.now()));
              Destination sink = new Destination();
              sink.setRef(new ServiceReference("v1", "Service", "orders"));
              sink.setUri("/orders/cancel?reason=unpaid");
              s.setSink(sink);
            }));

    await()
        .atMost(TIMEOUT)
        .until(() -> phase(client, ns, "to-service").orElse(null) == Phase.Succeeded);

    List<Receiver.Request> requests = receiver.requestsTo("/orders/cancel?reason=unpaid");
    assertThat(requests).hasSize(1);
    assertThat(requests.get(0).header("host"))
        .isEqualTo("orders." + ns + ".svc.cluster.local:" + receiver.port());
  }

  @Test
  void anAbsoluteUriOutsideTheAllowedPrefixesIsInvalidNamingTheVariable() {
    create(
        client,
        task(
            ns,
            "not-allowed",
            s -> {
              s.setRunAt(rfc3339(Instant.now()));
              Destination sink = new Destination();
              sink.setUri("http://hooks.example.com/due");
              s.setSink(sink);
            }));

    await()
        .atMost(TIMEOUT)
        .until(() -> phase(client, ns, "not-allowed").orElse(null) == Phase.Invalid);
    assertThat(get(client, ns, "not-allowed").getStatus().getMessage())
        .contains("DELAYEDTASK_SINK_ALLOWED_URIS");
  }

  @Test
  void anAudienceSendsTheSenderServiceAccountsTokenForExactlyThatAudience() {
    client
        .serviceAccounts()
        .inNamespace(ns)
        .resource(
            new ServiceAccountBuilder()
                .withNewMetadata()
                .withName("delayedtask-sender")
                .endMetadata()
                .build())
        .createOr(existing -> existing.update());
    // A token goes only over https (or to a Service of the namespace): the https receiver, trusted
    // through caCerts.
    create(client, httpsTask("with-token", "/authenticated", "orders"));

    await()
        .atMost(TIMEOUT)
        .until(() -> phase(client, ns, "with-token").orElse(null) == Phase.Succeeded);

    String authorization = tls.requestsTo("/authenticated").get(0).header("authorization");
    assertThat(authorization).startsWith("Bearer ");
    TokenReview review =
        client
            .resource(
                new TokenReviewBuilder()
                    .withNewSpec()
                    .withToken(authorization.substring("Bearer ".length()))
                    .withAudiences("orders")
                    .endSpec()
                    .build())
            .create();
    assertThat(review.getStatus().getAuthenticated()).isTrue();
    assertThat(review.getStatus().getUser().getUsername())
        .isEqualTo("system:serviceaccount:" + ns + ":delayedtask-sender");
    assertThat(review.getStatus().getAudiences()).containsExactly("orders");
  }

  @Test
  void anAudienceWithoutTheSenderServiceAccountFailsSayingWhichToCreate() {
    // Another audience than the test above, so no cached token stands in for the missing account.
    client.serviceAccounts().inNamespace(ns).withName("delayedtask-sender").delete();
    await()
        .atMost(TIMEOUT)
        .until(
            () ->
                client.serviceAccounts().inNamespace(ns).withName("delayedtask-sender").get()
                    == null);
    create(client, httpsTask("no-sender", "/never", "billing"));

    await()
        .atMost(TIMEOUT)
        .until(() -> phase(client, ns, "no-sender").orElse(null) == Phase.Failed);
    assertThat(get(client, ns, "no-sender").getStatus().getMessage())
        .contains(
            "ServiceAccount delayedtask-sender does not exist in namespace " + ns + ": create it");
    assertThat(tls.requestsTo("/never")).isEmpty();
  }

  private DelayedTask httpsTask(String name, String path, String audience) {
    return task(
        ns,
        name,
        s -> {
          s.setRunAt(rfc3339(Instant.now()));
          Destination sink = new Destination();
          sink.setUri(tls.base() + path);
          sink.setAudience(audience);
          sink.setCaCerts(tls.caCertsPem());
          s.setSink(sink);
        });
  }

  @Test
  void everyDeliveryAttemptCountsOnMetricsByItsOutcome() {
    int port = world.operator().httpPort();
    double retriesBefore = deliveries(port, "retry");
    double deliveredBefore = deliveries(port, "delivered");
    double failedBefore = deliveries(port, "failed");
    receiver.answer("/counted", Answer.status(503), Answer.status(200));
    receiver.answer("/counted-refused", Answer.status(400));
    create(
        client,
        sinkTask(
            "counted",
            Instant.now(),
            "/counted",
            s -> {
              DeliverySpec delivery = new DeliverySpec();
              delivery.setBackoffDelay("100ms");
              s.setDelivery(delivery);
            }));
    create(client, sinkTask("counted-refused", Instant.now(), "/counted-refused", s -> {}));

    await()
        .atMost(TIMEOUT)
        .until(
            () ->
                phase(client, ns, "counted").orElse(null) == Phase.Succeeded
                    && phase(client, ns, "counted-refused").orElse(null) == Phase.Failed);

    // At least: other tests' tasks (the hanging receiver's retries) may count meanwhile; 0 without
    // the call.
    await()
        .atMost(TIMEOUT)
        .untilAsserted(
            () -> {
              assertThat(deliveries(port, "retry") - retriesBefore)
                  .as("the 503")
                  .isGreaterThanOrEqualTo(1);
              assertThat(deliveries(port, "delivered") - deliveredBefore)
                  .as("the 200")
                  .isGreaterThanOrEqualTo(1);
              assertThat(deliveries(port, "failed") - failedBefore)
                  .as("the 400")
                  .isGreaterThanOrEqualTo(1);
            });
  }

  @Test
  void anHttpsSinkIsTrustedThroughTheTasksCaCerts() {
    create(
        client,
        task(
            ns,
            "trusted",
            s -> {
              s.setRunAt(rfc3339(Instant.now()));
              Destination sink = new Destination();
              sink.setUri(tls.base() + "/trusted");
              sink.setCaCerts(tls.caPem());
              s.setSink(sink);
            }));
    create(
        client,
        task(
            ns,
            "not-trusted",
            s -> {
              s.setRunAt(rfc3339(Instant.now()));
              Destination sink = new Destination();
              sink.setUri(tls.base() + "/not-trusted");
              s.setSink(sink);
              DeliverySpec delivery = new DeliverySpec();
              delivery.setRetry(0);
              s.setDelivery(delivery);
            }));

    await()
        .atMost(TIMEOUT)
        .until(() -> phase(client, ns, "trusted").orElse(null) == Phase.Succeeded);
    await()
        .atMost(TIMEOUT)
        .until(() -> phase(client, ns, "not-trusted").orElse(null) == Phase.Failed);

    assertThat(tls.requestsTo("/trusted"))
        .as("the task that carried the CA got through the handshake")
        .hasSize(1);
    assertThat(tls.requestsTo("/not-trusted")).as("the task without it did not").isEmpty();
    assertThat(get(client, ns, "not-trusted").getStatus().getMessage()).contains("got no answer");
  }

  @Test
  void aFailedAttemptIsADeliveryFailedWarningAndTheAnswerBodyGoesNowhere() {
    String body = "answer-body-5e1d9c-never-stored";
    receiver.answer(
        "/failing", Answer.status(503).withBody(body), Answer.status(400).withBody(body));
    try (LogCapture logs = LogCapture.start()) {
      create(
          client,
          sinkTask(
              "failing",
              Instant.now(),
              "/failing",
              s -> {
                DeliverySpec delivery = new DeliverySpec();
                delivery.setRetry(1);
                delivery.setBackoffDelay("100ms");
                s.setDelivery(delivery);
              }));

      await()
          .atMost(TIMEOUT)
          .until(() -> phase(client, ns, "failing").orElse(null) == Phase.Failed);
      await()
          .atMost(TIMEOUT)
          .untilAsserted(
              () ->
                  assertThat(Events.count(client, ns, "failing", "DeliveryFailed"))
                      .as("one DeliveryFailed per failed attempt")
                      .isEqualTo(2));

      List<Event> events =
          client.v1().events().inNamespace(ns).list().getItems().stream()
              .filter(e -> "failing".equals(e.getInvolvedObject().getName()))
              .toList();
      assertThat(events)
          .filteredOn(e -> "DeliveryFailed".equals(e.getReason()))
          .allSatisfy(e -> assertThat(e.getType()).isEqualTo("Warning"));
      assertThat(events).extracting(Event::getMessage).noneMatch(message -> message.contains(body));
      assertThat(Serialization.asJson(get(client, ns, "failing")))
          .as("the task")
          .doesNotContain(body);
      assertThat(logs.lines())
          .as("the operator's log lines, at DEBUG")
          .noneMatch(line -> line.contains(body));
    }
  }

  @Test
  void theDeadLetterSinkIsRetriedUnderTheSameRulesWithErrorCodeZeroWhenNoAnswerCame() {
    receiver.answer("/dead-letters-retried", Answer.status(503), Answer.status(200));
    create(
        client,
        task(
            ns,
            "unanswered",
            s -> {
              s.setRunAt(rfc3339(Instant.now()));
              Destination sink = new Destination();
              sink.setUri(
                  "http://127.0.0.1:"
                      + nobody
                      + "/nobody"); // nothing listens: the sink never answers
              s.setSink(sink);
              DeliverySpec delivery = new DeliverySpec();
              delivery.setRetry(1);
              delivery.setBackoffDelay("500ms");
              Destination deadLetters = new Destination();
              deadLetters.setUri(receiver.base() + "/dead-letters-retried");
              delivery.setDeadLetterSink(deadLetters);
              s.setDelivery(delivery);
            }));

    await()
        .atMost(TIMEOUT)
        .until(
            () -> {
              DelayedTask task = get(client, ns, "unanswered");
              return task.getStatus() != null
                  && task.getStatus().getDelivery() != null
                  && Boolean.TRUE.equals(task.getStatus().getDelivery().getDeadLettered());
            });

    List<Receiver.Request> deadLetters = receiver.requestsTo("/dead-letters-retried");
    assertThat(deadLetters).as("the 503 retried, as the sink's attempts are").hasSize(2);
    assertThat(deadLetters)
        .extracting(r -> r.header("ce-delayedtaskerrorcode"))
        .as("no answer came from the sink")
        .containsExactly("0", "0");
    assertThat(deadLetters)
        .extracting(r -> r.header("ce-id"))
        .containsOnly(deadLetters.get(0).header("ce-id"));
    assertThat(Duration.between(deadLetters.get(0).at(), deadLetters.get(1).at()))
        .as("the backoff between them")
        .isGreaterThanOrEqualTo(Duration.ofMillis(500));
    assertThat(get(client, ns, "unanswered").getStatus().getPhase()).isEqualTo(Phase.Failed);
  }

  @Test
  void startingDeadlineSecondsBoundsOnlyTheFirstAttempt() {
    receiver.answer("/late-retries", Answer.status(503), Answer.status(503), Answer.status(200));
    Instant due = Instant.now().plusSeconds(1);
    create(
        client,
        sinkTask(
            "deadline-first",
            due,
            "/late-retries",
            s -> {
              s.setStartingDeadlineSeconds(5L);
              DeliverySpec delivery = new DeliverySpec();
              delivery.setBackoffDelay("3s");
              s.setDelivery(delivery);
            }));

    await()
        .atMost(Duration.ofSeconds(60))
        .until(() -> phase(client, ns, "deadline-first").orElse(null) == Phase.Succeeded);

    List<Receiver.Request> requests = receiver.requestsTo("/late-retries");
    assertThat(requests).hasSize(3);
    assertThat(Duration.between(due, requests.get(2).at()))
        .as("the last attempt came after the 5 s deadline")
        .isGreaterThan(Duration.ofSeconds(5));
  }

  @Test
  void atMostMaxInFlightRequestsAreOpenAtOnceWhateverThePerHostCap() {
    try (Receiver slow =
            Receiver.start().answer("/slow", Answer.status(200).after(Duration.ofSeconds(8)));
        OperatorFixture.OnRealKubernetes capped =
            OperatorFixture.startOnRealKubernetes(
                kube,
                "sinkcap",
                Map.of(SinkConfig.ALLOWED_URIS, slow.base(), SinkConfig.MAX_IN_FLIGHT, "2"))) {
      Instant due = Instant.now().plusSeconds(3);
      for (int i = 0; i < 4; i++) {
        create(
            client,
            task(
                capped.namespace(),
                "capped-" + i,
                s -> {
                  s.setRunAt(rfc3339(due));
                  Destination sink = new Destination();
                  sink.setUri(slow.base() + "/slow");
                  s.setSink(sink);
                  DeliverySpec delivery = new DeliverySpec();
                  delivery.setTimeout("30s");
                  s.setDelivery(delivery);
                }));
      }

      await().atMost(TIMEOUT).until(() -> slow.requestsTo("/slow").size() >= 2);
      // Four due at once, one host (its cap the default 32): the other two wait for an answer (8
      // s).
      await("no third request while two are open")
          .during(Duration.ofSeconds(3))
          .atMost(Duration.ofSeconds(6))
          .until(() -> slow.requestsTo("/slow").size() == 2);
      await()
          .atMost(Duration.ofSeconds(90))
          .until(
              () ->
                  java.util.stream.IntStream.range(0, 4)
                      .allMatch(
                          i ->
                              phase(client, capped.namespace(), "capped-" + i).orElse(null)
                                  == Phase.Succeeded));
      assertThat(slow.requestsTo("/slow")).hasSize(4);
    }
  }

  private static double deliveries(int port, String outcome) {
    return OperatorHttp.metric(port, "delayedtask_deliveries_total", "outcome=\"" + outcome + "\"");
  }

  private DelayedTask sinkTask(
      String name, Instant due, String path, Consumer<DelayedTaskSpec> more) {
    return task(
        ns,
        name,
        s -> {
          s.setRunAt(rfc3339(due));
          Destination sink = new Destination();
          sink.setUri(receiver.base() + path);
          s.setSink(sink);
          more.accept(s);
        });
  }
}
