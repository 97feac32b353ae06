package io.delayedtask.operator.scale;

import io.delayedtask.operator.config.SinkConfig;
import io.delayedtask.operator.testing.OperatorProcess;
import io.delayedtask.operator.testing.Ports;
import io.delayedtask.operator.testing.Receiver;
import io.fabric8.kubernetes.api.model.SecretBuilder;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;

/**
 * Scale run (not a test): what {@code sink.signing} does to the sink's fire lag. One operator
 * process (the jar) on a real API server of its own, sink tasks at {@code -Drate} per second (half
 * the rate that server sustains here, as {@link SinkLagScale}), each with a 1 KiB payload, to a
 * receiver on 127.0.0.1; rounds of {@code -Dseconds} alternate unsigned and signed (A/B, which goes
 * first alternating), so the machine's other load falls on both alike. Lag = arrival on the
 * receiver's clock − {@code ce-time}. Prints each round and both sides pooled.
 *
 * <pre>
 * mvn -o package -DskipTests
 * mvn -o exec:java -Dexec.classpathScope=test -Dexec.mainClass=io.delayedtask.operator.scale.SigningLagScale \
 *   -Doperator.jar=target/delayed-task-operator.jar -Dtarget=real [-Drate=17] [-Dseconds=15] [-Drounds=3]
 * </pre>
 */
public final class SigningLagScale {
  private static final String NS = OperatorScaleLab.NAMESPACE;

  private SigningLagScale() {}

  public static void main(String[] args) throws Exception {
    for (String target : ScaleTarget.selected()) {
      run(target);
    }
    System.exit(0);
  }

  private static void run(String targetName) throws Exception {
    int rate = Integer.getInteger("rate", 17);
    int seconds = Integer.getInteger("seconds", 15);
    int rounds = Integer.getInteger("rounds", 3);
    try (OperatorScaleLab lab = new OperatorScaleLab(ScaleTarget.start(targetName));
        Receiver receiver = Receiver.start()) {
      OperatorScaleLab.banner(
          "SigningLagScale, "
              + rate
              + "/s sink tasks, "
              + rounds
              + " rounds of "
              + seconds
              + " s each unsigned and signed, alternated",
          lab.target);
      lab.client()
          .secrets()
          .inNamespace(NS)
          .resource(
              new SecretBuilder()
                  .withNewMetadata()
                  .withName(SinkConfig.DEFAULT_SIGNING_SECRET)
                  .endMetadata()
                  .withStringData(Map.of("lag", "whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw"))
                  .build())
          .create();
      int port = Ports.freePort();
      try (OperatorProcess operator =
          lab.startOperator(
              "signing-op",
              port,
              OperatorProcess.jar(),
              Map.of(SinkConfig.ALLOWED_URIS, receiver.base()))) {
        System.out.printf("operator ready in %d ms%n", lab.awaitReady(operator, port));
        SinkLoad.steady(lab, receiver, "warmup-u", rate, 5, false);
        SinkLoad.steady(lab, receiver, "warmup-s", rate, 5, true);
        List<Long> unsigned = new ArrayList<>();
        List<Long> signed = new ArrayList<>();
        for (int round = 0; round < rounds; round++) {
          for (boolean sign :
              round % 2 == 0 ? new boolean[] {false, true} : new boolean[] {true, false}) {
            String run = (sign ? "s" : "u") + round;
            SinkLoad.steady(lab, receiver, run, rate, seconds, sign);
            List<Receiver.Request> requests = receiver.requestsTo("/" + run);
            if (sign && !requests.stream().allMatch(r -> r.header("webhook-signature") != null)) {
              throw new IllegalStateException(
                  "a signed round's request came without its signature");
            }
            List<Long> lags = SinkLoad.lags(requests);
            SinkLoad.report("round " + round + ", " + (sign ? "signed  " : "unsigned"), lags);
            (sign ? signed : unsigned).addAll(lags);
          }
        }
        SinkLoad.report("all unsigned", unsigned.stream().sorted().toList());
        SinkLoad.report("all signed  ", signed.stream().sorted().toList());
        System.out.printf(
            "p99 signed - unsigned: %d ms%n",
            OperatorScaleLab.percentile(signed.stream().sorted().toList(), 0.99)
                - OperatorScaleLab.percentile(unsigned.stream().sorted().toList(), 0.99));
      }
    }
  }
}
