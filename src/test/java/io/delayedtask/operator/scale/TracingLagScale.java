package io.delayedtask.operator.scale;

import io.delayedtask.operator.api.v1alpha1.DelayedTask;
import io.delayedtask.operator.api.v1alpha1.Destination;
import io.delayedtask.operator.config.SinkConfig;
import io.delayedtask.operator.task.time.Times;
import io.delayedtask.operator.testing.OperatorProcess;
import io.delayedtask.operator.testing.OtlpReceiver;
import io.delayedtask.operator.testing.Ports;
import io.delayedtask.operator.testing.Receiver;
import io.delayedtask.operator.testing.Tasks;
import io.delayedtask.operator.trace.Tracing;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Objects;

/**
 * Scale run (not a test), issue 34's benchmark: what exporting traces does to the fire lag. Sink
 * tasks at {@code -Drate} per second (half the rate the real API server sustains here, as
 * {@link SigningLagScale}), each with a 1 KiB payload, to a receiver on 127.0.0.1, through one
 * operator process (the jar) on a real API server of its own. Tracing is set by the process's
 * environment only, so each round starts an operator of its own: tracing off (no {@code OTEL_*}
 * variable), or exported ({@code OTEL_EXPORTER_OTLP_ENDPOINT} to an OTLP/HTTP receiver on
 * 127.0.0.1, {@code testing/OtlpReceiver}, every other setting OpenTelemetry's default). Which goes
 * first alternates by round; each operator gets a warm-up load ({@code -Dwarmup} seconds, 5 by
 * default; its first export, which loads the exporter's classes, falls in it when it is over the
 * batch processor's 5 s delay) before its measured {@code -Dseconds}. Lag = arrival on the receiver's clock − {@code ce-time} (the due time). Prints
 * each round, both sides pooled, and the spans the OTLP receiver decoded.
 *
 * <pre>
 * mvn -o package -DskipTests
 * mvn -o exec:java -Dexec.classpathScope=test -Dexec.mainClass=io.delayedtask.operator.scale.TracingLagScale \
 *   -Doperator.jar=target/delayed-task-operator.jar -Dtarget=real [-Drate=17] [-Dseconds=15] [-Drounds=3] [-Dwarmup=5]
 * </pre>
 */
public final class TracingLagScale {
  private static final String NS = OperatorScaleLab.NAMESPACE;
  private static final Duration LEAD = Duration.ofSeconds(4);
  private static final Map<String, String> PAYLOAD = Map.of("orderId", "4".repeat(1024 - 14));

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
      OperatorScaleLab.banner("TracingLagScale, " + rate + "/s sink tasks, " + rounds + " rounds of " + seconds
          + " s each after " + warmup + " s of warm-up with tracing off and exported (OTLP to 127.0.0.1), "
          + "alternated, an operator process per round", lab.target);
      List<Long> off = new ArrayList<>();
      List<Long> exported = new ArrayList<>();
      for (int round = 0; round < rounds; round++) {
        for (boolean traced : round % 2 == 0 ? new boolean[] {false, true} : new boolean[] {true, false}) {
          String run = (traced ? "t" : "o") + round;
          Map<String, String> env = new HashMap<>(Map.of(SinkConfig.ALLOWED_URIS, receiver.base()));
          if (traced) {
            env.put("OTEL_EXPORTER_OTLP_ENDPOINT", otlp.endpoint());
            env.put("OTEL_SERVICE_NAME", "tracing-lag");
          }
          int spansBefore = otlp.spans(Tracing.FIRE).size();
          int port = Ports.freePort();
          try (OperatorProcess operator = lab.startOperator(run, port, OperatorProcess.jar(), env)) {
            long ready = lab.awaitReady(operator, port);
            steady(lab, receiver, run + "-warmup", rate, warmup);
            steady(lab, receiver, run, rate, seconds);
            operator.terminate(); // SIGTERM: the next round's operator takes the Lease at once; spans flushed
            List<Long> lags = lags(receiver.requestsTo("/" + run));
            int spans = otlp.spans(Tracing.FIRE).size() - spansBefore;
            report(String.format("round %d, %s (ready in %,d ms, %,d fire spans exported)", round,
                traced ? "exported" : "off     ", ready, spans), lags);
            if (traced && spans < lags.size()) {
              throw new IllegalStateException("tracing exported " + spans + " fire spans for " + lags.size()
                  + " tasks: not every firing was traced");
            }
            if (!traced && spans > 0) {
              throw new IllegalStateException("an operator without OTEL_* variables exported " + spans + " spans");
            }
            (traced ? exported : off).addAll(lags);
          }
        }
      }
      List<Long> offSorted = off.stream().sorted().toList();
      List<Long> exportedSorted = exported.stream().sorted().toList();
      report("all off     ", offSorted);
      report("all exported", exportedSorted);
      System.out.printf("p50 exported - off: %d ms; p99 exported - off: %d ms%n",
          OperatorScaleLab.percentile(exportedSorted, 0.50) - OperatorScaleLab.percentile(offSorted, 0.50),
          OperatorScaleLab.percentile(exportedSorted, 0.99) - OperatorScaleLab.percentile(offSorted, 0.99));
      System.out.printf("OTLP requests received: %,d, all to /v1/traces: %s; %s%n", otlp.paths().size(),
          otlp.paths().stream().allMatch("/v1/traces"::equals), ProcessMeter.loadAverage());
    }
  }

  /** Creates {@code rate} sink tasks a second for {@code seconds}, each due {@link #LEAD} later; waits for all. */
  private static void steady(OperatorScaleLab lab, Receiver receiver, String run, int rate, int seconds)
      throws Exception {
    long start = System.nanoTime();
    int count = rate * seconds;
    for (int i = 0; i < count; i++) {
      long wait = start + i * 1_000_000_000L / rate - System.nanoTime();
      if (wait > 0) {
        Thread.sleep(wait / 1_000_000, (int) (wait % 1_000_000)); // pacing the load, not waiting for a result
      }
      Instant due = Instant.now().plus(LEAD);
      DelayedTask task = Tasks.task(NS, run + "-" + i, s -> {
        s.setRunAt(Tasks.rfc3339(due));
        Destination sink = new Destination();
        sink.setUri(receiver.base() + "/" + run);
        s.setSink(sink);
        s.setPayload(PAYLOAD);
      });
      lab.client().resource(task).create();
    }
    long deadline = System.nanoTime() + Duration.ofMinutes(2).toNanos();
    while (receiver.requestsTo("/" + run).size() < count && System.nanoTime() < deadline) {
      Thread.sleep(200); // a measuring loop
    }
  }

  private static List<Long> lags(List<Receiver.Request> requests) {
    return requests.stream()
        .map(r -> Duration.between(Objects.requireNonNull(Times.parseOrNull(r.header("ce-time"))), r.at()).toMillis())
        .sorted().toList();
  }

  private static void report(String what, List<Long> sorted) {
    System.out.printf("%s: n=%,d p50 %d ms, p99 %d ms, max %d ms, early %d%n", what, sorted.size(),
        OperatorScaleLab.percentile(sorted, 0.50), OperatorScaleLab.percentile(sorted, 0.99),
        sorted.isEmpty() ? -1 : sorted.get(sorted.size() - 1), sorted.stream().filter(l -> l < 0).count());
  }
}
