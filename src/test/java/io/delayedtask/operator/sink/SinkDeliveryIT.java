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
import io.delayedtask.operator.task.Times;
import io.delayedtask.operator.testing.Events;
import io.delayedtask.operator.testing.OperatorFixture;
import io.delayedtask.operator.testing.RealKubernetes;
import io.delayedtask.operator.testing.Receiver;
import io.delayedtask.operator.testing.Receiver.Answer;
import io.delayedtask.operator.testing.RequiresRealKubernetes;
import io.fabric8.kubernetes.api.model.ServiceAccountBuilder;
import io.fabric8.kubernetes.api.model.ServiceBuilder;
import io.fabric8.kubernetes.api.model.authentication.TokenReview;
import io.fabric8.kubernetes.api.model.authentication.TokenReviewBuilder;
import io.fabric8.kubernetes.client.KubernetesClient;
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

  @BeforeAll
  static void start() {
    receiver = Receiver.start();
    hanging = Receiver.start();
    tls = Receiver.startHttps();
    kube = RealKubernetes.shared();
    client = kube.client();
    // Each receiver's origin, and the URL the ExternalName "orders" (localhost, the receiver's port) yields.
    world = OperatorFixture.startOnRealKubernetes(kube, "sink", Map.of(SinkConfig.ALLOWED_URIS, String.join(",",
        receiver.base(), hanging.base(), tls.base(), "http://localhost:" + receiver.port() + "/orders/")));
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
    DelayedTask created = create(client, sinkTask("delivered", due, "/delivered", s -> s.setPayload(Map.of("orderId", "42"))));

    await().atMost(TIMEOUT).until(() -> phase(client, ns, "delivered").orElse(null) == Phase.Succeeded);

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
    assertThat(request.header("ce-source")).isEqualTo("/apis/delayedtask.io/v1alpha1/namespaces/" + ns
        + "/delayedtasks/delivered");
    assertThat(request.header("ce-id")).isEqualTo(uid + "." + dueMs.toEpochMilli());
    assertThat(request.header("ce-time")).isEqualTo(Times.format(dueMs));
    assertThat(request.header("ce-delayedtaskattempt")).isEqualTo("1");
    assertThat(request.header("authorization")).as("no token without an audience").isNull();
    assertThat(request.body()).isEqualTo("{\"orderId\":\"42\"}");
    io.cloudevents.CloudEvent event = request.event(); // read back by the CloudEvents SDK's HTTP reader
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
    await().atMost(TIMEOUT).until(() -> Events.reasons(client, ns, "delivered").contains("Delivered"));
  }

  @Test
  void dataIsSentVerbatimWithItsContentTypeAndEveryOverrideIsAnExtension() {
    String xml = "<order id=\"42\"><reason>unpaid</reason></order>";
    create(client, sinkTask("with-data", Instant.now(), "/with-data", s -> {
      s.setPayload(Map.of("ignored", "when data is set"));
      s.setData(xml);
      s.setContentType("application/xml");
      s.setCeOverrides(new io.delayedtask.operator.api.v1alpha1.CeOverrides(Map.of("team", "orders", "region", "eu1")));
    }));
    create(client, sinkTask("json-data", Instant.now(), "/json-data", s -> s.setData("{\"orderId\": 42, \"items\": [1, 2]}")));

    await().atMost(TIMEOUT).until(() -> phase(client, ns, "with-data").orElse(null) == Phase.Succeeded
        && phase(client, ns, "json-data").orElse(null) == Phase.Succeeded);

    io.cloudevents.CloudEvent xmlEvent = receiver.requestsTo("/with-data").get(0).event();
    assertThat(xmlEvent.getDataContentType()).isEqualTo("application/xml");
    assertThat(new String(xmlEvent.getData().toBytes(), java.nio.charset.StandardCharsets.UTF_8)).isEqualTo(xml);
    assertThat(xmlEvent.getExtension("team")).isEqualTo("orders");
    assertThat(xmlEvent.getExtension("region")).isEqualTo("eu1");
    assertThat(xmlEvent.getExtension("delayedtaskattempt")).isEqualTo("1");
    assertThat(xmlEvent.getExtensionNames()).containsExactlyInAnyOrder("team", "region", "delayedtaskattempt");
    io.cloudevents.CloudEvent jsonEvent = receiver.requestsTo("/json-data").get(0).event();
    assertThat(jsonEvent.getDataContentType()).isEqualTo("application/json");
    assertThat(new String(jsonEvent.getData().toBytes(), java.nio.charset.StandardCharsets.UTF_8))
        .isEqualTo("{\"orderId\": 42, \"items\": [1, 2]}");
    assertThat(get(client, ns, "with-data").getStatus().getSinkUri()).isEqualTo(receiver.base() + "/with-data");
  }

  @Test
  void dataThatIsNotJsonUnderAJsonContentTypeIsInvalidNamingTheFieldAndIsNeverSent() {
    create(client, sinkTask("bad-json", Instant.now(), "/bad-json", s -> {
      s.setData("orderId=42");
      s.setContentType("application/cloudevents+json");
    }));

    await().atMost(TIMEOUT).until(() -> phase(client, ns, "bad-json").orElse(null) == Phase.Invalid);
    assertThat(get(client, ns, "bad-json").getStatus().getMessage())
        .contains("spec.data is not valid JSON, and spec.contentType is application/cloudevents+json");
    assertThat(receiver.requestsTo("/bad-json")).isEmpty();
  }

  @Test
  void twoFailuresThenSuccessAreThreeRequestsWithOneIdSpacedByTheBackoffAndRetryAfter() {
    receiver.answer("/flaky", Answer.status(503), Answer.status(503).withHeader("Retry-After", "3"), Answer.status(200));
    Instant due = Instant.now().plusSeconds(1);
    create(client, sinkTask("flaky", due, "/flaky", s -> {
      DeliverySpec delivery = new DeliverySpec();
      delivery.setBackoffDelay("1s");
      s.setDelivery(delivery);
    }));

    await().atMost(TIMEOUT).untilAsserted(() -> {
      DelayedTask waiting = get(client, ns, "flaky");
      assertThat(waiting.getStatus().getPhase()).isEqualTo(Phase.Running);
      assertThat(waiting.getStatus().getDelivery().getNextAttemptTime()).isNotNull();
    });
    await().atMost(TIMEOUT).until(() -> phase(client, ns, "flaky").orElse(null) == Phase.Succeeded);

    List<Receiver.Request> requests = receiver.requestsTo("/flaky");
    assertThat(requests).extracting(r -> r.header("ce-delayedtaskattempt")).containsExactly("1", "2", "3");
    assertThat(requests).extracting(r -> r.header("ce-id")).containsOnly(requests.get(0).header("ce-id"));
    assertThat(Duration.between(requests.get(0).at(), requests.get(1).at()))
        .as("attempt 2 waits backoffDelay x 2^0").isGreaterThanOrEqualTo(Duration.ofMillis(1000));
    assertThat(Duration.between(requests.get(1).at(), requests.get(2).at()))
        .as("attempt 3 waits at least what Retry-After asked (3 s), more than the backoff's 2 s")
        .isGreaterThanOrEqualTo(Duration.ofMillis(3000));
    assertThat(get(client, ns, "flaky").getStatus().getDelivery().getAttempts()).isEqualTo(3);
  }

  @Test
  void a400FailsAtOnceWithTheMethodUrlAnswerAndAttemptCount() {
    receiver.answer("/refuses", Answer.status(400));
    create(client, sinkTask("refused", Instant.now(), "/refuses", s -> { }));

    await().atMost(TIMEOUT).until(() -> phase(client, ns, "refused").orElse(null) == Phase.Failed);

    assertThat(receiver.requestsTo("/refuses")).hasSize(1);
    assertThat(get(client, ns, "refused").getStatus().getMessage())
        .isEqualTo("POST " + receiver.base() + "/refuses answered 400 on attempt 1 of 4");
  }

  @Test
  void exhaustedRetriesFailAndTheDeadLetterSinkGetsTheEventWithTheErrorHeaders() {
    receiver.answer("/down", Answer.status(502));
    create(client, sinkTask("dead-lettered", Instant.now(), "/down", s -> {
      DeliverySpec delivery = new DeliverySpec();
      delivery.setRetry(1);
      delivery.setBackoffDelay("200ms");
      Destination deadLetters = new Destination();
      deadLetters.setUri(receiver.base() + "/dead-letters");
      delivery.setDeadLetterSink(deadLetters);
      s.setDelivery(delivery);
    }));

    await().atMost(TIMEOUT).until(() -> {
      DelayedTask task = get(client, ns, "dead-lettered");
      return task.getStatus().getDelivery() != null && Boolean.TRUE.equals(task.getStatus().getDelivery().getDeadLettered());
    });

    assertThat(receiver.requestsTo("/down")).hasSize(2);
    List<Receiver.Request> deadLetters = receiver.requestsTo("/dead-letters");
    assertThat(deadLetters).hasSize(1);
    assertThat(deadLetters.get(0).header("ce-delayedtaskerrorcode")).isEqualTo("502");
    assertThat(deadLetters.get(0).header("ce-delayedtaskerrordest")).isEqualTo(receiver.base() + "/down");
    assertThat(deadLetters.get(0).header("ce-id")).isEqualTo(receiver.requestsTo("/down").get(0).header("ce-id"));
    DelayedTask task = get(client, ns, "dead-lettered");
    assertThat(task.getStatus().getPhase()).isEqualTo(Phase.Failed);
    assertThat(task.getStatus().getMessage()).isEqualTo("POST " + receiver.base() + "/down answered 502 on attempt 2 of 2");
    await().atMost(TIMEOUT).until(() -> Events.reasons(client, ns, "dead-lettered").contains("DeadLettered"));
  }

  @Test
  void aRedirectIsNeverFollowed() {
    receiver.answer("/moved", Answer.status(302).withHeader("Location", receiver.base() + "/elsewhere"));
    create(client, sinkTask("redirected", Instant.now(), "/moved", s -> { }));

    await().atMost(TIMEOUT).until(() -> phase(client, ns, "redirected").orElse(null) == Phase.Failed);

    assertThat(receiver.requestsTo("/elsewhere")).isEmpty();
    assertThat(get(client, ns, "redirected").getStatus().getMessage()).contains("answered 302 on attempt 1 of 4");
  }

  @Test
  void aReceiverThatNeverAnswersIsCutByTheTimeoutAndRetried() {
    receiver.answer("/silent", Answer.status(200).after(Duration.ofSeconds(20)));
    create(client, sinkTask("silent", Instant.now(), "/silent", s -> {
      DeliverySpec delivery = new DeliverySpec();
      delivery.setRetry(1);
      delivery.setTimeout("1s");
      delivery.setBackoffDelay("100ms");
      s.setDelivery(delivery);
    }));

    await().atMost(TIMEOUT).until(() -> phase(client, ns, "silent").orElse(null) == Phase.Failed);

    assertThat(receiver.requestsTo("/silent")).hasSize(2);
    assertThat(get(client, ns, "silent").getStatus().getMessage()).startsWith("POST " + receiver.base()
        + "/silent got no answer").endsWith("on attempt 2 of 2");
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
        create(client, task(ns, name, s -> {
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
        fast.add(create(client, sinkTask("fast-" + i, due, "/fast", s -> { })).getMetadata().getName());
      }

      await().atMost(TIMEOUT).until(() -> fast.stream().allMatch(n -> phase(client, ns, n).orElse(null) == Phase.Succeeded));

      assertThat(hanging.requestsTo("/hangs")).as("the hanging requests were open meanwhile").hasSize(5);
      assertThat(phase(client, ns, "hangs-0")).as("still waiting for its answer").contains(Phase.Scheduled);
      List<Receiver.Request> delivered = receiver.requestsTo("/fast");
      assertThat(delivered).hasSize(50);
      assertThat(delivered).allSatisfy(request -> assertThat(Duration.between(
          Times.parseOrNull(request.header("ce-time")), request.at()))
          .as("lag on the receiver's clock, far below the hanging receiver's 20 s timeout")
          .isBetween(Duration.ZERO, Duration.ofSeconds(3)));
    }
  }

  @Test
  void aServiceRefResolvesToTheServiceWithItsPortAndPath() {
    // An ExternalName Service naming localhost: what cluster DNS would give, reachable from this host.
    client.services().inNamespace(ns).resource(new ServiceBuilder().withNewMetadata().withName("orders").endMetadata()
        .withNewSpec().withType("ExternalName").withExternalName("localhost")
        .addNewPort().withName("http").withPort(receiver.port()).endPort().endSpec().build()).create();
    create(client, task(ns, "to-service", s -> {
      s.setRunAt(rfc3339(Instant.now()));
      Destination sink = new Destination();
      sink.setRef(new ServiceReference("v1", "Service", "orders"));
      sink.setUri("/orders/cancel?reason=unpaid");
      s.setSink(sink);
    }));

    await().atMost(TIMEOUT).until(() -> phase(client, ns, "to-service").orElse(null) == Phase.Succeeded);

    List<Receiver.Request> requests = receiver.requestsTo("/orders/cancel?reason=unpaid");
    assertThat(requests).hasSize(1);
    assertThat(requests.get(0).header("host")).isEqualTo("orders." + ns + ".svc.cluster.local:" + receiver.port());
  }

  @Test
  void anAbsoluteUriOutsideTheAllowedPrefixesIsInvalidNamingTheVariable() {
    create(client, task(ns, "not-allowed", s -> {
      s.setRunAt(rfc3339(Instant.now()));
      Destination sink = new Destination();
      sink.setUri("http://hooks.example.com/due");
      s.setSink(sink);
    }));

    await().atMost(TIMEOUT).until(() -> phase(client, ns, "not-allowed").orElse(null) == Phase.Invalid);
    assertThat(get(client, ns, "not-allowed").getStatus().getMessage()).contains("DELAYEDTASK_SINK_ALLOWED_URIS");
  }

  @Test
  void anAudienceSendsTheSenderServiceAccountsTokenForExactlyThatAudience() {
    client.serviceAccounts().inNamespace(ns).resource(new ServiceAccountBuilder().withNewMetadata()
        .withName("delayedtask-sender").endMetadata().build()).createOr(existing -> existing.update());
    // A token goes only over https (or to a Service of the namespace): the https receiver, trusted through caCerts.
    create(client, httpsTask("with-token", "/authenticated", "orders"));

    await().atMost(TIMEOUT).until(() -> phase(client, ns, "with-token").orElse(null) == Phase.Succeeded);

    String authorization = tls.requestsTo("/authenticated").get(0).header("authorization");
    assertThat(authorization).startsWith("Bearer ");
    TokenReview review = client.resource(new TokenReviewBuilder().withNewSpec()
        .withToken(authorization.substring("Bearer ".length())).withAudiences("orders").endSpec().build()).create();
    assertThat(review.getStatus().getAuthenticated()).isTrue();
    assertThat(review.getStatus().getUser().getUsername()).isEqualTo("system:serviceaccount:" + ns + ":delayedtask-sender");
    assertThat(review.getStatus().getAudiences()).containsExactly("orders");
  }

  @Test
  void anAudienceWithoutTheSenderServiceAccountFailsSayingWhichToCreate() {
    // Another audience than the test above, so no cached token stands in for the missing account.
    client.serviceAccounts().inNamespace(ns).withName("delayedtask-sender").delete();
    await().atMost(TIMEOUT).until(() -> client.serviceAccounts().inNamespace(ns).withName("delayedtask-sender").get() == null);
    create(client, httpsTask("no-sender", "/never", "billing"));

    await().atMost(TIMEOUT).until(() -> phase(client, ns, "no-sender").orElse(null) == Phase.Failed);
    assertThat(get(client, ns, "no-sender").getStatus().getMessage())
        .contains("ServiceAccount delayedtask-sender does not exist in namespace " + ns + ": create it");
    assertThat(tls.requestsTo("/never")).isEmpty();
  }

  private DelayedTask httpsTask(String name, String path, String audience) {
    return task(ns, name, s -> {
      s.setRunAt(rfc3339(Instant.now()));
      Destination sink = new Destination();
      sink.setUri(tls.base() + path);
      sink.setAudience(audience);
      sink.setCaCerts(tls.caCertsPem());
      s.setSink(sink);
    });
  }

  private DelayedTask sinkTask(String name, Instant due, String path, Consumer<DelayedTaskSpec> more) {
    return task(ns, name, s -> {
      s.setRunAt(rfc3339(due));
      Destination sink = new Destination();
      sink.setUri(receiver.base() + path);
      s.setSink(sink);
      more.accept(s);
    });
  }

}
