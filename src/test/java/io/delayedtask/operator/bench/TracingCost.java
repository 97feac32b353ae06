package io.delayedtask.operator.bench;

import io.delayedtask.operator.api.v1alpha1.DelayedTask;
import io.delayedtask.operator.sink.DeliveryRequest;
import io.delayedtask.operator.sink.DeliveryResult;
import io.delayedtask.operator.sink.OkHttpSender;
import io.delayedtask.operator.sink.Reach;
import io.delayedtask.operator.task.job.TaskTrace;
import io.delayedtask.operator.testing.OtlpReceiver;
import io.delayedtask.operator.testing.Receiver;
import io.delayedtask.operator.testing.Tasks;
import io.delayedtask.operator.trace.Tracing;
import java.lang.management.ManagementFactory;
import java.lang.management.ThreadInfo;
import java.lang.management.ThreadMXBean;
import java.net.URI;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.OptionalInt;
import java.util.UUID;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.locks.LockSupport;

/**
 * What tracing adds to a firing that delivers, measured on the path itself: each firing takes its
 * trace context ({@link TaskTrace#of}), starts the attempt's span, sends the CloudEvent with its
 * {@code traceparent} through {@link OkHttpSender} to a receiver on 127.0.0.1, ends the span with
 * the answer and records the {@code delayedtask.fire} span, as {@code SinkDeliveryStarter} and the
 * reconciler do. A/B in one JVM: {@link Tracing#off()} against tracing exported over OTLP/HTTP to a
 * receiver on 127.0.0.1 (its batch processor's thread and requests included), rounds alternated.
 * The end-to-end fire lag (scale/TracingLagScale) moves by more than a millisecond between rounds
 * on this machine, so it cannot tell a 1 ms bound; this can.
 *
 * <pre>
 * mvn -B -q -o -DskipControlPlane -DskipTestPackages test-compile exec:java -Dexec.classpathScope=test \
 *     -Dexec.mainClass=io.delayedtask.operator.bench.TracingCost
 * </pre>
 *
 * A main rather than a test (no Test/IT suffix), so {@code mvn verify} never runs it.
 */
public final class TracingCost {
  private static final int ROUNDS = Integer.getInteger("rounds", 20);
  private static final int FIRINGS_PER_ROUND = Integer.getInteger("firings", 250);

  /** Firings a second (-Drate); 0: one after another, as fast as they go. */
  private static final int RATE = Integer.getInteger("rate", 0);

  private TracingCost() {}

  public static void main(String[] args) throws Exception {
    StringBuilder report =
        BenchReport.report(
            "Tracing's cost per firing",
            ROUNDS
                + " rounds, alternating which goes first; each round fires "
                + FIRINGS_PER_ROUND
                + (RATE > 0
                    ? " sink tasks, " + RATE + " a second"
                    : " sink tasks one after another, as fast as they go")
                + " (trace context, the attempt's span, a 1 KiB payload sent through"
                + " `OkHttpSender` to a receiver on 127.0.0.1, the span ended, the firing's span"
                + " recorded) and measures each firing from its trace context to its span.");
    try (Receiver receiver = Receiver.start();
        OtlpReceiver otlp = OtlpReceiver.start()) {
      Tracing exported = Tracing.fromEnvironment(Map.of(Tracing.OTLP_ENDPOINT, otlp.endpoint()));
      OkHttpSender sender = LoopbackSender.open();
      try {
        URI url = URI.create(receiver.base() + "/bench");
        Map<String, String> payload = Map.of("orderId", "4".repeat(1024 - 14));
        List<Long> off = new ArrayList<>();
        List<Long> on = new ArrayList<>();
        List<Long> offTracing = new ArrayList<>();
        List<Long> onTracing = new ArrayList<>();
        // A warm-up round each, not counted.
        fireRound(sender, url, payload, Tracing.off(), new ArrayList<>(), new ArrayList<>());
        fireRound(sender, url, payload, exported, new ArrayList<>(), new ArrayList<>());
        long exporterCpuBefore = exporterCpuNanos();
        for (int round = 0; round < ROUNDS; round++) {
          if (round % 2 == 0) {
            fireRound(sender, url, payload, Tracing.off(), off, offTracing);
            fireRound(sender, url, payload, exported, on, onTracing);
          } else {
            fireRound(sender, url, payload, exported, on, onTracing);
            fireRound(sender, url, payload, Tracing.off(), off, offTracing);
          }
        }
        long exporterCpu = exporterCpuNanos() - exporterCpuBefore;
        exported.close(); // flushes what the batch processor still holds
        int expected = (ROUNDS + 1) * FIRINGS_PER_ROUND;
        report
            .append(BenchReport.microsTable("firings"))
            .append(BenchReport.microsRow("tracing off", off))
            .append(BenchReport.microsRow("tracing exported (OTLP/HTTP)", on))
            .append(
                String.format(
                    "%nExported minus off: p50 %+.1f µs, p90 %+.1f µs, p99 %+.1f µs.%n",
                    BenchReport.micros(on, 50) - BenchReport.micros(off, 50),
                    BenchReport.micros(on, 90) - BenchReport.micros(off, 90),
                    BenchReport.micros(on, 99) - BenchReport.micros(off, 99)))
            .append(
                "\nTracing's own calls on the firing's path (its trace context, starting the"
                    + " attempt's span and its headers; ending it and recording the firing's span),"
                    + " timed within the same firings:\n\n"
                    + BenchReport.microsTable("firings"))
            .append(BenchReport.microsRow("tracing off", offTracing))
            .append(BenchReport.microsRow("tracing exported (OTLP/HTTP)", onTracing))
            .append(
                String.format(
                    "%nThe batch span processor's thread (serialising and sending off the path):"
                        + " %.1f ms of CPU for the %d measured exported firings, %.1f µs a firing.%n",
                    exporterCpu / 1e6, on.size(), exporterCpu / 1000.0 / on.size()))
            .append(
                String.format(
                    "Spans the OTLP receiver decoded: %d `%s` and %d `%s` of %d firings"
                        + " exported (warm-up included), in %d requests.%n",
                    otlp.spans(Tracing.FIRE).size(),
                    Tracing.FIRE,
                    otlp.spans(Tracing.DELIVER).size(),
                    Tracing.DELIVER,
                    expected,
                    otlp.paths().size()));
      } finally {
        sender.close();
      }
    }
    System.out.print(report);
    System.exit(0);
  }

  private static void fireRound(
      OkHttpSender sender,
      URI url,
      Map<String, String> payload,
      Tracing tracing,
      List<Long> nanos,
      List<Long> tracingNanos)
      throws Exception {
    long next = System.nanoTime();
    for (int i = 0; i < FIRINGS_PER_ROUND; i++) {
      if (RATE > 0) { // the pace of a rate, not a wait for a result
        LockSupport.parkNanos(next - System.nanoTime());
        next += 1_000_000_000L / RATE;
      }
      DelayedTask task = Tasks.statusOnly("bench", "t-" + i, Instant.now());
      task.getMetadata().setUid(UUID.randomUUID().toString());
      Instant due = Instant.now();
      long start = System.nanoTime();
      TaskTrace trace = TaskTrace.of(task, due);
      Tracing.Delivery span =
          tracing.deliver(trace, "bench", "t-" + i, task.getMetadata().getUid(), 1, false, url);
      Map<String, String> traceHeaders = span.headers();
      long traced = System.nanoTime() - start;
      DeliveryRequest request =
          new DeliveryRequest(
                  url,
                  new Reach.ByName(Optional.empty(), true, true),
                  new DeliveryRequest.TaskEvent(
                      task.getMetadata().getUid() + "." + due.toEpochMilli(),
                      "/apis/delayedtask.io/v1alpha1/namespaces/bench/delayedtasks/t-" + i,
                      due,
                      1,
                      payload,
                      Map.of()),
                  Optional.empty(),
                  Optional.empty(),
                  Duration.ofSeconds(5))
              .withTraceHeaders(traceHeaders);
      DeliveryResult result = sender.send(request).toCompletableFuture().get(10, TimeUnit.SECONDS);
      if (!(result instanceof DeliveryResult.Answered answered) || answered.status() != 200) {
        throw new IllegalStateException("the receiver did not answer 200: " + result);
      }
      long ending = System.nanoTime();
      span.end(OptionalInt.of(answered.status()), null);
      Instant now = Instant.now();
      tracing.fired(
          trace,
          "bench",
          "t-" + i,
          task.getMetadata().getUid(),
          due,
          Duration.between(due, now),
          "sink",
          "succeeded",
          now);
      long end = System.nanoTime();
      nanos.add(end - start);
      tracingNanos.add(traced + (end - ending));
    }
  }

  /** CPU time so far of the SDK's batch span processor thread(s), by name. */
  private static long exporterCpuNanos() {
    ThreadMXBean threads = ManagementFactory.getThreadMXBean();
    long total = 0;
    for (ThreadInfo info : threads.dumpAllThreads(false, false)) {
      if (info.getThreadName().startsWith("BatchSpanProcessor")) {
        total += Math.max(0, threads.getThreadCpuTime(info.getThreadId()));
      }
    }
    return total;
  }
}
