package io.delayedtask.operator.sink;

import static org.assertj.core.api.Assertions.assertThat;

import io.delayedtask.operator.api.v1alpha1.DelayedTask;
import io.delayedtask.operator.api.v1alpha1.DelayedTaskSpec;
import io.delayedtask.operator.api.v1alpha1.Destination;
import io.delayedtask.operator.api.v1alpha1.ServiceReference;
import io.delayedtask.operator.config.SinkConfig;
import io.delayedtask.operator.task.spec.SpecValidator;
import io.delayedtask.operator.task.spec.Validation;
import io.delayedtask.operator.testing.LoopbackOnlySockets;
import io.fabric8.kubernetes.api.model.ObjectMetaBuilder;
import io.micrometer.core.instrument.simple.SimpleMeterRegistry;
import java.io.InputStream;
import java.net.InetAddress;
import java.net.URI;
import java.net.UnknownHostException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.security.KeyStore;
import java.time.Clock;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.TimeUnit;
import javax.net.ssl.KeyManagerFactory;
import javax.net.ssl.SSLContext;
import mockwebserver3.MockResponse;
import mockwebserver3.MockWebServer;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * {@code sink.caCerts}: an https receiver on 127.0.0.1 whose self-signed certificate (made by the
 * JDK's keytool for {@code receiver.test}) is trusted only when the request carries it.
 */
class OkHttpSenderTlsTest {
  private static final char[] PASSWORD = "changeit".toCharArray();

  @TempDir Path dir;

  private final LoopbackOnlySockets sockets = new LoopbackOnlySockets();
  private final MockWebServer receiver = new MockWebServer();
  private OkHttpSender sender;
  private String pem;

  @BeforeEach
  void start() throws Exception {
    Path keystore = dir.resolve("receiver.p12");
    keytool(
        "-genkeypair",
        "-alias",
        "receiver",
        "-keyalg",
        "EC",
        "-groupname",
        "secp256r1",
        "-validity",
        "2",
        "-dname",
        "CN=receiver.test",
        "-ext",
        "SAN=dns:receiver.test",
        "-keystore",
        keystore.toString(),
        "-storetype",
        "PKCS12",
        "-storepass",
        new String(PASSWORD));
    Path certificate = dir.resolve("receiver.pem");
    keytool(
        "-exportcert",
        "-rfc",
        "-alias",
        "receiver",
        "-keystore",
        keystore.toString(),
        "-storepass",
        new String(PASSWORD),
        "-file",
        certificate.toString());
    pem = Files.readString(certificate);

    KeyStore keys = KeyStore.getInstance("PKCS12");
    try (InputStream in = Files.newInputStream(keystore)) {
      keys.load(in, PASSWORD);
    }
    KeyManagerFactory keyManagers =
        KeyManagerFactory.getInstance(KeyManagerFactory.getDefaultAlgorithm());
    keyManagers.init(keys, PASSWORD);
    SSLContext tls = SSLContext.getInstance("TLS");
    tls.init(keyManagers.getKeyManagers(), null, null);
    receiver.useHttps(tls.getSocketFactory());
    receiver.start(InetAddress.getByName("127.0.0.1"), 0);
    sender =
        new OkHttpSender(
            SinkConfig.defaults(),
            new SimpleMeterRegistry(),
            OkHttpSenderTlsTest::resolve,
            sockets,
            Clock.systemUTC());
  }

  private static List<InetAddress> resolve(String host) throws UnknownHostException {
    if (!host.equals("receiver.test")) {
      throw new UnknownHostException(host);
    }
    return List.of(InetAddress.getByName("127.0.0.1"));
  }

  private static void keytool(String... args) throws Exception {
    Path keytool = Path.of(System.getProperty("java.home"), "bin", "keytool");
    List<String> command = new java.util.ArrayList<>(List.of(keytool.toString()));
    command.addAll(List.of(args));
    Process process = new ProcessBuilder(command).redirectErrorStream(true).start();
    String output = new String(process.getInputStream().readAllBytes());
    assertThat(process.waitFor(60, TimeUnit.SECONDS)).isTrue();
    assertThat(process.exitValue()).as(output).isZero();
  }

  @AfterEach
  void stop() {
    sender.close();
    receiver.close();
    assertThat(sockets.refused()).isEmpty();
  }

  private DeliveryRequest request(Optional<String> caCerts) {
    return new DeliveryRequest(
        URI.create("https://receiver.test:" + receiver.getPort() + "/"),
        new Reach.ByName(Optional.empty(), true, true),
        new DeliveryRequest.TaskEvent("id", "/s", java.time.Instant.EPOCH, 1, Map.of(), Map.of()),
        Optional.empty(),
        caCerts,
        Duration.ofSeconds(5));
  }

  @Test
  void trustsTheTasksCaCerts() throws Exception {
    receiver.enqueue(new MockResponse.Builder().code(200).build());
    DeliveryResult result =
        sender.send(request(Optional.of(pem))).toCompletableFuture().get(10, TimeUnit.SECONDS);
    assertThat(result)
        .isInstanceOfSatisfying(
            DeliveryResult.Answered.class,
            answered -> assertThat(answered.status()).isEqualTo(200));
  }

  @Test
  void withoutThemTheCertificateIsNotTrusted() throws Exception {
    DeliveryResult result =
        sender.send(request(Optional.empty())).toCompletableFuture().get(10, TimeUnit.SECONDS);
    assertThat(result)
        .isInstanceOfSatisfying(
            DeliveryResult.NoAnswer.class,
            noAnswer -> assertThat(noAnswer.why()).isEqualTo("TLS certificate not trusted"));
  }

  @Test
  void theTaskValidatorAcceptsTheCaCertsTheSenderTrustsAndRefusesWhatItCannotUse() {
    SpecValidator validator = new SpecValidator(new SinkSpecRules(SinkConfig.defaults()));
    assertThat(validator.validate(taskWithCaCerts(pem))).isInstanceOf(Validation.Valid.class);
    assertThat(
            validator.validate(
                taskWithCaCerts(
                    "-----BEGIN CERTIFICATE-----\nnot base64\n-----END CERTIFICATE-----\n")))
        .isInstanceOfSatisfying(
            Validation.Invalid.class,
            invalid ->
                assertThat(invalid.message()).startsWith("spec.sink.caCerts is not valid PEM"));
  }

  private static DelayedTask taskWithCaCerts(String caCerts) {
    DelayedTask task = new DelayedTask();
    task.setMetadata(
        new ObjectMetaBuilder()
            .withName("t")
            .withNamespace("tasks")
            .withUid("u-1")
            .withCreationTimestamp("2026-12-04T00:00:00Z")
            .build());
    DelayedTaskSpec spec = new DelayedTaskSpec();
    spec.setDelay("1m");
    Destination sink = new Destination();
    sink.setRef(new ServiceReference("v1", "Service", "receiver"));
    sink.setCaCerts(caCerts);
    spec.setSink(sink);
    task.setSpec(spec);
    return task;
  }

  @Test
  void caCertsThatAreNoPemFailWithoutSending() throws Exception {
    DeliveryResult result =
        sender
            .send(request(Optional.of("-----BEGIN CERTIFICATE-----\nnot base64\n")))
            .toCompletableFuture()
            .get(10, TimeUnit.SECONDS);
    assertThat(result)
        .isInstanceOfSatisfying(
            DeliveryResult.Forbidden.class,
            forbidden -> assertThat(forbidden.rule()).startsWith("sink.caCerts"));
    assertThat(receiver.getRequestCount()).isZero();
  }
}
