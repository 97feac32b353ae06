package io.delayedtask.operator.scale;

import io.delayedtask.operator.config.SinkConfig;
import io.delayedtask.operator.testing.OperatorProcess;
import io.delayedtask.operator.testing.OtlpReceiver;
import io.delayedtask.operator.testing.Ports;
import io.delayedtask.operator.testing.Receiver;
import io.delayedtask.operator.trace.Tracing;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;

/**
 * Scale run (not a test), issue 34's benchmark: what exporting traces does to the fire lag. Sink
 * tasks at {@code -Drate} per second (half the rate the real API server sustains here, as {@link
 * SigningLagScale}), each with a 1 KiB payload, to a receiver on 127.0.0.1, through one operator
 * process (the jar) on a real API server of its own. Tracing is set by the process's environment
 * only, so each round starts an operator of its own: tracing off (no {@code OTEL_*} variable), or
 * exported ({@code OTEL_EXPORTER_OTLP_ENDPOINT} to an OTLP/HTTP receiver on 127.0.0.1, {@code
 * testing/OtlpReceiver}, every other setting OpenTelemetry's default). Which goes first alternates
 * by round; each operator gets a warm-up load ({@code -Dwarmup} seconds, 5 by default; its first
 * export, which loads the exporter's classes, falls in it when it is over the batch processor's 5 s
 * delay) before its measured {@code -Dseconds}. Lag = arrival on the receiver's clock − {@code
 * ce-time} (the due time). Prints each round, both sides pooled, and the spans the OTLP receiver
 * decoded.
 *
 * <pre>
 * mvn -o package -DskipTests
 * mvn -o exec:java -Dexec.classpathScope=test -Dexec.mainClass=io.delayedtask.operator.scale.TracingLagScale \
 *   -Doperator.jar=target/delayed-task-operator.jar -Dtarget=real [-Drate=17] [-Dseconds=15] [-Drounds=3] [-Dwarmup=5]
 * </pre>
 */
public final class TracingLagScale {
  private static final String NS = OperatorScaleLab.NAMESPACE;

  private TracingLagScale() {}

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
    int warmup = Integer.getInteger("warmup", 5);
    try (OperatorScaleLab lab = new OperatorScaleLab(ScaleTarget.start(targetName));
        Receiver receiver = Receiver.start();
        OtlpReceiver otlp = OtlpReceiver.start()) {
      OperatorScaleLab.banner(
          "TracingLagScale, "
              + rate
              + "/s sink tasks, "
              + rounds
              + " rounds of "
              + seconds
              + " s each after "
              + warmup
              + " s of warm-up with tracing off and exported (OTLP to 127.0.0.1), "
              + "alternated, an operator process per round",
          lab.target);
      List<Long> off = new ArrayList<>();
      List<Long> exported = new ArrayList<>();
      for (int round = 0; round < rounds; round++) {
        for (boolean traced :
            round % 2 == 0 ? new boolean[] {false, true} : new boolean[] {true, false}) {
          String run = (traced ? "t" : "o") + round;
          Map<String, String> env = new HashMap<>(Map.of(SinkConfig.ALLOWED_URIS, receiver.base()));
          if (traced) {
            env.put("OTEL_EXPORTER_OTLP_ENDPOINT", otlp.endpoint());
            env.put("OTEL_SERVICE_NAME", "tracing-lag");
          }
          int spansBefore = otlp.spans(Tracing.FIRE).size();
          int port = Ports.freePort();
          try (OperatorProcess operator =
              lab.startOperator(run, port, OperatorProcess.jar(), env)) {
            long ready = lab.awaitReady(operator, port);
            SinkLoad.steady(lab, receiver, run + "-warmup", rate, warmup, false);
            SinkLoad.steady(lab, receiver, run, rate, seconds, false);
            operator
                .terminate(); // SIGTERM: the next round's operator takes the Lease at once; spans
            // flushed
            List<Long> lags = SinkLoad.lags(receiver.requestsTo("/" + run));
            int spans = otlp.spans(Tracing.FIRE).size() - spansBefore;
            SinkLoad.report(
                String.format(
                    "round %d, %s (ready in %,d ms, %,d fire spans exported)",
                    round, traced ? "exported" : "off     ", ready, spans),
                lags);
            if (traced && spans < lags.size()) {
              throw new IllegalStateException(
                  "tracing exported "
                      + spans
                      + " fire spans for "
                      + lags.size()
                      + " tasks: not every firing was traced");
            }
            if (!traced && spans > 0) {
              throw new IllegalStateException(
                  "an operator without OTEL_* variables exported " + spans + " spans");
            }
            (traced ? exported : off).addAll(lags);
          }
        }
      }
      List<Long> offSorted = off.stream().sorted().toList();
      List<Long> exportedSorted = exported.stream().sorted().toList();
      SinkLoad.report("all off     ", offSorted);
      SinkLoad.report("all exported", exportedSorted);
      System.out.printf(
          "p50 exported - off: %d ms; p99 exported - off: %d ms%n",
          OperatorScaleLab.percentile(exportedSorted, 0.50)
              - OperatorScaleLab.percentile(offSorted, 0.50),
          OperatorScaleLab.percentile(exportedSorted, 0.99)
              - OperatorScaleLab.percentile(offSorted, 0.99));
      System.out.printf(
          "OTLP requests received: %,d, all to /v1/traces: %s; %s%n",
          otlp.paths().size(),
          otlp.paths().stream().allMatch("/v1/traces"::equals),
          ProcessMeter.loadAverage());
    }
  }
}
