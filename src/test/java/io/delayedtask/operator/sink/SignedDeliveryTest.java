package io.delayedtask.operator.sink;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import com.standardwebhooks.Webhook;
import com.standardwebhooks.exceptions.WebhookVerificationException;
import io.delayedtask.operator.config.SinkConfig;
import io.delayedtask.operator.sink.signing.SigningKeys;
import io.delayedtask.operator.testing.LoopbackOnlySockets;
import io.micrometer.core.instrument.simple.SimpleMeterRegistry;
import java.net.InetAddress;
import java.net.URI;
import java.net.UnknownHostException;
import java.nio.charset.StandardCharsets;
import java.security.SecureRandom;
import java.time.Clock;
import java.time.Duration;
import java.time.Instant;
import java.time.ZoneId;
import java.time.ZoneOffset;
import java.util.Base64;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.TreeMap;
import java.util.concurrent.TimeUnit;
import mockwebserver3.MockResponse;
import mockwebserver3.MockWebServer;
import mockwebserver3.RecordedRequest;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

/**
 * What the sender puts on the wire for a signed attempt, checked by Standard Webhooks' own Java
 * library ({@code com.standardwebhooks:standardwebhooks}, not the operator's code): the body
 * exactly as received, the three headers, a retry's new timestamp and signature under the same id,
 * and several secrets while rotating. The receiver is mockwebserver3 on 127.0.0.1.
 */
class SignedDeliveryTest {
  private static final SecureRandom RANDOM = new SecureRandom();

  private final MockWebServer receiver = new MockWebServer();
  private final MovableClock clock = new MovableClock(Instant.now());
  private OkHttpSender sender;

  /**
   * A clock a test moves forward, near the real time (the library refuses timestamps 5 minutes
   * off).
   */
  private static final class MovableClock extends Clock {
    private volatile Instant now;

    MovableClock(Instant now) {
      this.now = now;
    }

    void advance(Duration by) {
      now = now.plus(by);
    }

    @Override
    public ZoneId getZone() {
      return ZoneOffset.UTC;
    }

    @Override
    public Clock withZone(ZoneId zone) {
      return this;
    }

    @Override
    public Instant instant() {
      return now;
    }
  }

  private static List<InetAddress> resolve(String host) throws UnknownHostException {
    if (!host.equals("receiver.test")) {
      throw new UnknownHostException(host + " is not a test name");
    }
    return List.of(InetAddress.getByName("127.0.0.1"));
  }

  @BeforeEach
  void start() throws Exception {
    receiver.start(InetAddress.getByName("127.0.0.1"), 0);
    sender =
        new OkHttpSender(
            SinkConfig.defaults(),
            new SimpleMeterRegistry(),
            SignedDeliveryTest::resolve,
            new LoopbackOnlySockets(),
            clock);
  }

  @AfterEach
  void stop() {
    sender.close();
    receiver.close();
  }

  static String newSecret() {
    byte[] bytes = new byte[32];
    RANDOM.nextBytes(bytes);
    return "whsec_" + Base64.getEncoder().encodeToString(bytes);
  }

  private DeliveryRequest request(
      int attempt,
      Map<String, String> payload,
      Optional<DeliveryRequest.Data> data,
      String secrets) {
    DeliveryRequest.TaskEvent event =
        new DeliveryRequest.TaskEvent(
            "0b5e7c3a-uid.1796281200000",
            "/apis/delayedtask.io/v1alpha1/namespaces/shop/delayedtasks/cancel-42",
            Instant.parse("2026-12-03T07:00:00Z"),
            attempt,
            payload,
            data,
            Map.of());
    return new DeliveryRequest(
        URI.create("http://receiver.test:" + receiver.getPort() + "/hook"),
        new Reach.ByName(Optional.empty(), true, true),
        event,
        Optional.empty(),
        Optional.empty(),
        Duration.ofSeconds(5),
        Optional.of(SigningKeys.parse(secrets, "the test's secret", "fix the test")));
  }

  private RecordedRequest sendAndReceive(DeliveryRequest request) throws Exception {
    receiver.enqueue(new MockResponse.Builder().code(204).build());
    DeliveryResult result = sender.send(request).toCompletableFuture().get(10, TimeUnit.SECONDS);
    assertThat(result).isInstanceOf(DeliveryResult.Answered.class);
    RecordedRequest recorded = receiver.takeRequest(1, TimeUnit.SECONDS);
    assertThat(recorded).isNotNull();
    return recorded;
  }

  /**
   * The library's verify: throws unless one signature matches the body and headers for this secret.
   */
  private static void verify(String secret, RecordedRequest recorded)
      throws WebhookVerificationException {
    Map<String, List<String>> headers = new TreeMap<>(String.CASE_INSENSITIVE_ORDER);
    recorded.getHeaders().toMultimap().forEach(headers::put);
    String body =
        recorded.getBody() == null ? "" : recorded.getBody().string(StandardCharsets.UTF_8);
    new Webhook(secret).verify(body, headers);
  }

  @Test
  void aPayloadBodyIsSignedAsSentAndTheLibraryVerifiesIt() throws Exception {
    String secret = newSecret();
    RecordedRequest recorded =
        sendAndReceive(
            request(1, Map.of("orderId", "42", "reason", "late"), Optional.empty(), secret));
    assertThat(recorded.getBody().utf8()).isEqualTo("{\"orderId\":\"42\",\"reason\":\"late\"}");
    assertThat(recorded.getHeaders().values("webhook-id"))
        .containsExactly("0b5e7c3a-uid.1796281200000");
    assertThat(recorded.getHeaders().values("ce-id")).containsExactly("0b5e7c3a-uid.1796281200000");
    assertThat(recorded.getHeaders().values("webhook-timestamp"))
        .containsExactly(Long.toString(clock.instant().getEpochSecond()));
    assertThat(recorded.getHeaders().get("webhook-signature")).matches("v1,[A-Za-z0-9+/]{43}=");
    verify(secret, recorded);
    assertThatThrownBy(() -> verify(newSecret(), recorded))
        .isInstanceOf(WebhookVerificationException.class);
  }

  @Test
  void dataEmptyAnd16KiBBodiesAreSignedAsSent() throws Exception {
    String secret = newSecret();
    String sixteenKiB = "x".repeat(16 * 1024 - 2);
    for (String text :
        List.of("<order id=\"42\"/>", "", "\"" + sixteenKiB + "\"", "ünïcødé ✓ {\"a\": 1}")) {
      RecordedRequest recorded =
          sendAndReceive(
              request(
                  1,
                  Map.of(),
                  Optional.of(new DeliveryRequest.Data("text/plain; charset=utf-8", text)),
                  secret));
      assertThat(recorded.getBody().string(StandardCharsets.UTF_8)).isEqualTo(text);
      verify(secret, recorded);
    }
    RecordedRequest empty = sendAndReceive(request(1, Map.of(), Optional.empty(), secret));
    assertThat(empty.getBody().utf8()).isEqualTo("{}");
    verify(secret, empty);
  }

  @Test
  void aRetryHasANewTimestampAndSignatureUnderTheSameId() throws Exception {
    String secret = newSecret();
    RecordedRequest first =
        sendAndReceive(request(1, Map.of("orderId", "42"), Optional.empty(), secret));
    clock.advance(Duration.ofSeconds(7));
    RecordedRequest second =
        sendAndReceive(request(2, Map.of("orderId", "42"), Optional.empty(), secret));
    verify(secret, first);
    verify(secret, second);
    assertThat(second.getHeaders().get("webhook-id"))
        .isEqualTo(first.getHeaders().get("webhook-id"));
    assertThat(Long.parseLong(second.getHeaders().get("webhook-timestamp")))
        .isEqualTo(Long.parseLong(first.getHeaders().get("webhook-timestamp")) + 7);
    assertThat(second.getHeaders().get("webhook-signature"))
        .isNotEqualTo(first.getHeaders().get("webhook-signature"));
  }

  @Test
  void whileRotatingEachSecretSignsAndEitherVerifies() throws Exception {
    String old = newSecret();
    String fresh = newSecret();
    RecordedRequest recorded =
        sendAndReceive(request(1, Map.of("orderId", "42"), Optional.empty(), fresh + " \n" + old));
    String[] signatures = recorded.getHeaders().get("webhook-signature").split(" ");
    assertThat(signatures).hasSize(2).allMatch(signature -> signature.startsWith("v1,"));
    verify(old, recorded);
    verify(fresh, recorded);
  }
}
