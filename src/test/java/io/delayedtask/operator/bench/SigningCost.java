package io.delayedtask.operator.bench;

import io.delayedtask.operator.sink.DeliveryRequest;
import io.delayedtask.operator.sink.DeliveryResult;
import io.delayedtask.operator.sink.OkHttpSender;
import io.delayedtask.operator.sink.Reach;
import io.delayedtask.operator.sink.signing.SigningKeys;
import io.delayedtask.operator.testing.Receiver;
import java.net.URI;
import java.security.SecureRandom;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.Base64;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.TimeUnit;

/**
 * What {@code sink.signing} costs an attempt: (1) the signature alone (HMAC-SHA256 over {@code
 * id.timestamp.body}, for bodies of 2 B, 1 KiB and 16 KiB, with one secret and with two while
 * rotating), and (2) whole attempts through the operator's sender to a receiver on 127.0.0.1,
 * unsigned and signed, alternated round by round (A/B) so that the machine's other load falls on
 * both alike. Prints a Markdown report.
 *
 * <pre>
 * mvn -B -q test-compile exec:java -Dexec.classpathScope=test \
 *     -Dexec.mainClass=io.delayedtask.operator.bench.SigningCost
 * </pre>
 *
 * A main rather than a test (no Test/IT suffix), so {@code mvn verify} never runs it.
 */
public final class SigningCost {
  private static final int SIGN_ROUNDS = 15;
  private static final int SIGNS_PER_ROUND = 20_000;
  private static final int SEND_ROUNDS = 20;
  private static final int SENDS_PER_ROUND = 200;

  private SigningCost() {}

  public static void main(String[] args) throws Exception {
    StringBuilder report =
        BenchReport.report(
            "Signing's cost per attempt", "The signature alone, then whole attempts A/B.");
    report
        .append("## The signature alone\n\n")
        .append("Median of ")
        .append(SIGN_ROUNDS)
        .append(" rounds of ")
        .append(SIGNS_PER_ROUND)
        .append(" signatures each, after a warm-up round.\n\n")
        .append(
            "| body | secrets | µs per signature (median) | fastest round |\n|---|---|---|---|\n");
    SigningKeys one = SigningKeys.parse(secret(), "bench", "bench");
    SigningKeys two = SigningKeys.parse(secret() + " " + secret(), "bench", "bench");
    long sink = 0;
    for (int size : new int[] {2, 1024, 16 * 1024}) {
      byte[] body = new byte[size];
      for (SigningKeys keys : List.of(one, two)) {
        List<Double> perSign = new ArrayList<>();
        for (int round = -1; round < SIGN_ROUNDS; round++) {
          long start = System.nanoTime();
          for (int i = 0; i < SIGNS_PER_ROUND; i++) {
            sink +=
                keys.headers(
                        "0b5e7c3a-uid.1796281200000", Instant.ofEpochSecond(1796281200L + i), body)
                    .get("webhook-signature")
                    .length();
          }
          if (round >= 0) {
            perSign.add((System.nanoTime() - start) / 1000.0 / SIGNS_PER_ROUND);
          }
        }
        report.append(
            String.format(
                "| %s | %d | %.2f | %.2f |%n",
                size < 1024 ? size + " B" : size / 1024 + " KiB",
                keys.count(),
                median(perSign),
                perSign.stream().mapToDouble(Double::doubleValue).min().orElse(0)));
      }
    }
    report
        .append("\n## Whole attempts, unsigned against signed (A/B)\n\n")
        .append(SEND_ROUNDS)
        .append(" rounds, alternating which goes first; each round sends ")
        .append(SENDS_PER_ROUND)
        .append(
            " attempts one after another (a 1 KiB payload) through `OkHttpSender` to a receiver on 127.0.0.1 ")
        .append("(`testing/Receiver`) and measures each attempt from `send` to its result.\n\n");
    try (Receiver receiver = Receiver.start()) {
      OkHttpSender sender = LoopbackSender.open();
      try {
        List<Long> unsigned = new ArrayList<>();
        List<Long> signed = new ArrayList<>();
        URI url = URI.create(receiver.base() + "/bench");
        Map<String, String> payload = Map.of("orderId", "4".repeat(1024 - 14));
        sendRound(sender, url, payload, Optional.empty(), new ArrayList<>()); // warm-up
        sendRound(sender, url, payload, Optional.of(one), new ArrayList<>());
        for (int round = 0; round < SEND_ROUNDS; round++) {
          if (round % 2 == 0) {
            sendRound(sender, url, payload, Optional.empty(), unsigned);
            sendRound(sender, url, payload, Optional.of(one), signed);
          } else {
            sendRound(sender, url, payload, Optional.of(one), signed);
            sendRound(sender, url, payload, Optional.empty(), unsigned);
          }
        }
        report
            .append(BenchReport.microsTable("attempts"))
            .append(BenchReport.microsRow("unsigned", unsigned))
            .append(BenchReport.microsRow("signed (1 secret)", signed))
            .append(
                String.format(
                    "%nSigned minus unsigned at p50: %.1f µs.%n",
                    BenchReport.micros(signed, 50) - BenchReport.micros(unsigned, 50)));
      } finally {
        sender.close();
      }
    }
    System.out.print(report);
    if (sink == 42) {
      System.out.println();
    }
  }

  private static void sendRound(
      OkHttpSender sender,
      URI url,
      Map<String, String> payload,
      Optional<SigningKeys> signing,
      List<Long> nanos)
      throws Exception {
    for (int i = 0; i < SENDS_PER_ROUND; i++) {
      DeliveryRequest.TaskEvent event =
          new DeliveryRequest.TaskEvent(
              "0b5e7c3a-uid." + i,
              "/apis/delayedtask.io/v1alpha1/namespaces/bench/delayedtasks/t",
              Instant.now(),
              1,
              payload,
              Map.of());
      DeliveryRequest request =
          new DeliveryRequest(
              url,
              new Reach.ByName(Optional.empty(), true, true),
              event,
              Optional.empty(),
              Optional.empty(),
              Duration.ofSeconds(5),
              signing);
      long start = System.nanoTime();
      DeliveryResult result = sender.send(request).toCompletableFuture().get(10, TimeUnit.SECONDS);
      nanos.add(System.nanoTime() - start);
      if (!(result instanceof DeliveryResult.Answered answered) || answered.status() != 200) {
        throw new IllegalStateException("the receiver did not answer 200: " + result);
      }
    }
  }

  private static double median(List<Double> values) {
    List<Double> sorted = values.stream().sorted().toList();
    return sorted.get(sorted.size() / 2);
  }

  private static String secret() {
    byte[] bytes = new byte[32];
    new SecureRandom().nextBytes(bytes);
    return "whsec_" + Base64.getEncoder().encodeToString(bytes);
  }
}
