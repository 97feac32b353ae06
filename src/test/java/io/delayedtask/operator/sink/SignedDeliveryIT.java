package io.delayedtask.operator.sink;

import static io.delayedtask.operator.testing.Tasks.create;
import static io.delayedtask.operator.testing.Tasks.get;
import static io.delayedtask.operator.testing.Tasks.phase;
import static io.delayedtask.operator.testing.Tasks.rfc3339;
import static io.delayedtask.operator.testing.Tasks.task;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.awaitility.Awaitility.await;

import com.standardwebhooks.Webhook;
import com.standardwebhooks.exceptions.WebhookVerificationException;
import io.delayedtask.operator.api.v1alpha1.DelayedTask;
import io.delayedtask.operator.api.v1alpha1.DelayedTaskSpec;
import io.delayedtask.operator.api.v1alpha1.DeliverySpec;
import io.delayedtask.operator.api.v1alpha1.Destination;
import io.delayedtask.operator.api.v1alpha1.Phase;
import io.delayedtask.operator.api.v1alpha1.Signing;
import io.delayedtask.operator.config.OperatorConfig;
import io.delayedtask.operator.config.SinkConfig;
import io.delayedtask.operator.testing.LogCapture;
import io.delayedtask.operator.testing.OperatorFixture;
import io.delayedtask.operator.testing.RealKubernetes;
import io.delayedtask.operator.testing.Receiver;
import io.delayedtask.operator.testing.Receiver.Answer;
import io.delayedtask.operator.testing.RequiresRealKubernetes;
import io.fabric8.kubernetes.api.model.SecretBuilder;
import io.fabric8.kubernetes.client.KubernetesClient;
import io.fabric8.kubernetes.client.utils.Serialization;
import java.nio.charset.StandardCharsets;
import java.security.SecureRandom;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.Base64;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;
import java.util.function.Consumer;
import java.util.function.UnaryOperator;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

/**
 * {@code sink.signing} end to end: the operator in-process on a real API server reads the signing
 * Secret through its watch and signs each attempt; the receiver (127.0.0.1) records the headers and
 * Standard Webhooks' own Java library verifies them. Every test ends by searching all the operator
 * wrote (its log at DEBUG, the namespaces' Events, the tasks' status) for any form of a secret.
 */
@RequiresRealKubernetes
class SignedDeliveryIT {
  private static final Duration TIMEOUT = Duration.ofSeconds(60);
  private static final String SECRET = SinkConfig.DEFAULT_SIGNING_SECRET;

  private static KubernetesClient client;
  private static OperatorFixture.OnRealKubernetes world;
  private static String ns;

  /** A namespace the operator watches with no signing Secret in it. */
  private static String bare;

  private static Receiver receiver;
  private static LogCapture logs;
  private static final List<String> secretsUsed = new ArrayList<>();

  @BeforeAll
  static void start() {
    logs = LogCapture.start();
    receiver = Receiver.start();
    RealKubernetes kube = RealKubernetes.shared();
    client = kube.client();
    // Watching a second namespace that has no signing Secret.
    bare = kube.createNamespace("signing-bare");
    world =
        OperatorFixture.startOnRealKubernetes(
            kube,
            "signing",
            signing ->
                Map.of(
                    OperatorConfig.NAMESPACES,
                    signing + "," + bare,
                    SinkConfig.ALLOWED_URIS,
                    receiver.base()),
            UnaryOperator.identity());
    ns = world.namespace();
  }

  @AfterAll
  static void stop() {
    if (world != null) {
      world.close();
    }
    if (receiver != null) {
      receiver.close();
    }
    if (logs != null) {
      logs.close();
    }
  }

  static String newSecret(int bytes) {
    byte[] random = new byte[bytes];
    new SecureRandom().nextBytes(random);
    String secret = "whsec_" + Base64.getEncoder().encodeToString(random);
    synchronized (secretsUsed) {
      secretsUsed.add(secret);
    }
    return secret;
  }

  private static void writeSecret(Map<String, String> values) {
    client
        .secrets()
        .inNamespace(ns)
        .resource(
            new SecretBuilder()
                .withNewMetadata()
                .withName(SECRET)
                .endMetadata()
                .withStringData(values)
                .build())
        .serverSideApply();
  }

  /**
   * Standard Webhooks' library: throws unless a signature of the request matches for this secret.
   */
  private static void verify(String secret, Receiver.Request request)
      throws WebhookVerificationException {
    Map<String, List<String>> headers = new TreeMap<>(String.CASE_INSENSITIVE_ORDER);
    request.headers().forEach((name, value) -> headers.put(name, List.of(value)));
    new Webhook(secret).verify(request.body(), headers);
  }

  private DelayedTask sinkTask(String name, String path, Consumer<DelayedTaskSpec> more) {
    return task(
        ns,
        name,
        s -> {
          s.setRunAt(rfc3339(Instant.now()));
          Destination sink = new Destination();
          sink.setUri(receiver.base() + path);
          s.setSink(sink);
          more.accept(s);
        });
  }

  @Test
  void eachAttemptIsSignedAndTheAttemptAfterARotationCarriesTheNewSignature() throws Exception {
    String first = newSecret(32);
    String second = newSecret(24);
    writeSecret(Map.of("orders", first));
    receiver.answer(
        "/rotated", Answer.status(503), Answer.status(503), Answer.status(503), Answer.status(200));
    DelayedTask created =
        create(
            client,
            sinkTask(
                "rotated",
                "/rotated",
                s -> {
                  s.setPayload(Map.of("orderId", "42"));
                  s.getSink().setSigning(new Signing("orders"));
                  DeliverySpec delivery = new DeliverySpec();
                  delivery.setRetry(3);
                  delivery.setBackoffPolicy("linear");
                  delivery.setBackoffDelay("2s");
                  s.setDelivery(delivery);
                }));

    await().atMost(TIMEOUT).until(() -> receiver.requestsTo("/rotated").size() >= 1);
    // Rotation: the new secret first, the old one kept while receivers move over.
    writeSecret(Map.of("orders", second + " " + first));
    Instant rotated = Instant.now();
    await()
        .atMost(TIMEOUT)
        .until(() -> phase(client, ns, "rotated").orElse(null) == Phase.Succeeded);

    List<Receiver.Request> requests = receiver.requestsTo("/rotated");
    assertThat(requests).hasSize(4);
    String ceId = requests.get(0).header("ce-id");
    assertThat(ceId).startsWith(created.getMetadata().getUid() + ".");
    for (Receiver.Request request : requests) {
      assertThat(request.header("webhook-id"))
          .as("webhook-id is the ce-id on every attempt")
          .isEqualTo(ceId);
      assertThat(request.body()).isEqualTo("{\"orderId\":\"42\"}");
      assertThat(Long.parseLong(request.header("webhook-timestamp")))
          .as("the attempt's send time")
          .isBetween(request.at().getEpochSecond() - 5, request.at().getEpochSecond());
      verify(first, request);
    }
    assertThat(requests.stream().map(r -> r.header("webhook-signature")).distinct()).hasSize(4);
    assertThatThrownBy(() -> verify(second, requests.get(0)))
        .isInstanceOf(WebhookVerificationException.class);
    Receiver.Request last = requests.get(3);
    assertThat(last.at()).isAfter(rotated);
    verify(second, last);
    assertThat(last.header("webhook-signature").split(" ")).hasSize(2);
    assertNoSecretWritten();
  }

  @Test
  void theDeadLetterSinkSignsWithItsOwnKeyAndDataIsSignedAsSent() throws Exception {
    String sinkSecret = newSecret(32);
    String deadSecret = newSecret(64);
    writeSecret(Map.of("orders", sinkSecret, "dead-letters", deadSecret));
    String sixteenKiB = "x".repeat(16 * 1024);
    receiver.answer("/refuses", Answer.status(400));
    create(
        client,
        sinkTask(
            "dead-lettered",
            "/refuses",
            s -> {
              s.setData(sixteenKiB);
              s.setContentType("text/plain");
              s.getSink().setSigning(new Signing("orders"));
              DeliverySpec delivery = new DeliverySpec();
              Destination dead = new Destination();
              dead.setUri(receiver.base() + "/dead-letters");
              dead.setSigning(new Signing("dead-letters"));
              delivery.setDeadLetterSink(dead);
              s.setDelivery(delivery);
            }));

    await().atMost(TIMEOUT).until(() -> receiver.requestsTo("/dead-letters").size() == 1);
    Receiver.Request toSink = receiver.requestsTo("/refuses").get(0);
    Receiver.Request toDead = receiver.requestsTo("/dead-letters").get(0);
    assertThat(toDead.body()).hasSize(16 * 1024);
    verify(sinkSecret, toSink);
    verify(deadSecret, toDead);
    assertThatThrownBy(() -> verify(sinkSecret, toDead))
        .isInstanceOf(WebhookVerificationException.class);
    assertThat(toDead.header("webhook-id")).isEqualTo(toSink.header("webhook-id"));
    await()
        .atMost(TIMEOUT)
        .until(
            () ->
                get(client, ns, "dead-lettered").getStatus().getDelivery() != null
                    && Boolean.TRUE.equals(
                        get(client, ns, "dead-lettered")
                            .getStatus()
                            .getDelivery()
                            .getDeadLettered()));
    assertNoSecretWritten();
  }

  @Test
  void aMissingSecretOrKeyOrAShortSecretFailsNamingTheSecretKeyAndFixAndNothingIsSentUnsigned() {
    writeSecret(Map.of("orders", newSecret(32), "short", newSecret(16)));
    Map<String, String> expected =
        Map.of(
            "no-key",
                "Secret "
                    + SECRET
                    + " in namespace "
                    + ns
                    + " has no key absent (sink.signing.key): add it",
            "too-short",
                "key short of Secret "
                    + SECRET
                    + " in namespace "
                    + ns
                    + " (sink.signing.key) is 16 bytes "
                    + "long, shorter than the 24 bytes (192 bits) the Standard Webhooks specification asks for; write a "
                    + "Standard Webhooks secret there, such as: kubectl -n "
                    + ns
                    + " create secret generic "
                    + SECRET
                    + " --from-literal=short=whsec_$(openssl rand -base64 32)");
    create(
        client,
        sinkTask(
            "no-key",
            "/unsigned",
            s -> {
              s.getSink().setSigning(new Signing("absent"));
              s.setDelivery(new DeliverySpec());
              s.getDelivery().setRetry(0);
            }));
    create(
        client,
        sinkTask(
            "too-short",
            "/unsigned",
            s -> {
              s.getSink().setSigning(new Signing("short"));
              s.setDelivery(new DeliverySpec());
              s.getDelivery().setRetry(0);
            }));
    DelayedTask noSecret =
        task(
            bare,
            "no-secret",
            s -> {
              s.setRunAt(rfc3339(Instant.now()));
              Destination sink = new Destination();
              sink.setUri(receiver.base() + "/unsigned");
              sink.setSigning(new Signing("orders"));
              s.setSink(sink);
              s.setDelivery(new DeliverySpec());
              s.getDelivery().setRetry(0);
            });
    create(client, noSecret);

    expected.forEach(
        (name, message) -> {
          await(name)
              .atMost(TIMEOUT)
              .until(() -> phase(client, ns, name).orElse(null) == Phase.Failed);
          assertThat(get(client, ns, name).getStatus().getMessage()).contains(message);
        });
    await()
        .atMost(TIMEOUT)
        .until(() -> phase(client, bare, "no-secret").orElse(null) == Phase.Failed);
    assertThat(get(client, bare, "no-secret").getStatus().getMessage())
        .contains(
            "Secret "
                + SECRET
                + " does not exist in namespace "
                + bare
                + ", and sink.signing.key orders names a key of it: create it");
    assertThat(receiver.requestsTo("/unsigned")).as("never sent unsigned").isEmpty();
    assertNoSecretWritten();
  }

  /**
   * No secret, nor its base64 part, nor the Secret's base64 of it, in the log, an Event or a
   * status.
   */
  private static void assertNoSecretWritten() {
    List<String> written = new ArrayList<>(logs.lines());
    for (String namespace : List.of(ns, bare)) {
      client
          .v1()
          .events()
          .inNamespace(namespace)
          .list()
          .getItems()
          .forEach(event -> written.add(Serialization.asJson(event)));
      client
          .resources(DelayedTask.class)
          .inNamespace(namespace)
          .list()
          .getItems()
          .forEach(task -> written.add(Serialization.asJson(task.getStatus())));
    }
    assertThat(written).as("what the operator wrote").isNotEmpty();
    List<String> forms = new ArrayList<>();
    synchronized (secretsUsed) {
      for (String secret : secretsUsed) {
        forms.add(secret.substring("whsec_".length(), "whsec_".length() + 16));
        forms.add(
            Base64.getEncoder()
                .encodeToString(secret.getBytes(StandardCharsets.UTF_8))
                .substring(8, 24));
      }
    }
    for (String line : written) {
      for (String form : forms) {
        assertThat(line).doesNotContain(form);
      }
    }
  }
}
