package io.delayedtask.operator.scale;

import io.delayedtask.operator.api.v1alpha1.DelayedTask;
import io.delayedtask.operator.api.v1alpha1.Destination;
import io.delayedtask.operator.api.v1alpha1.Signing;
import io.delayedtask.operator.task.time.Times;
import io.delayedtask.operator.testing.Receiver;
import io.delayedtask.operator.testing.Tasks;
import java.time.Duration;
import java.time.Instant;
import java.util.List;
import java.util.Map;
import java.util.Objects;

/**
 * The steady sink load the lag runs share: sink tasks with a 1 KiB payload created at a rate, each
 * due {@link #LEAD} after its creation, to one receiver; their lags on the receiver's clock, and
 * the line that reports them.
 */
final class SinkLoad {
  static final Duration LEAD = Duration.ofSeconds(4);
  private static final Map<String, String> PAYLOAD = Map.of("orderId", "4".repeat(1024 - 14));

  private SinkLoad() {}

  /**
   * Creates {@code rate} sink tasks a second for {@code seconds} to {@code receiver}'s path {@code
   * /run}, signed with the Secret key {@code lag} when {@code sign}; waits until all arrived (at
   * most 2 minutes).
   */
  static void steady(
      OperatorScaleLab lab, Receiver receiver, String run, int rate, int seconds, boolean sign)
      throws InterruptedException {
    long start = System.nanoTime();
    int count = rate * seconds;
    for (int i = 0; i < count; i++) {
      long wait = start + i * 1_000_000_000L / rate - System.nanoTime();
      if (wait > 0) {
        Thread.sleep(
            wait / 1_000_000,
            (int) (wait % 1_000_000)); // pacing the load, not waiting for a result
      }
      Instant due = Instant.now().plus(LEAD);
      DelayedTask task =
          Tasks.task(
              OperatorScaleLab.NAMESPACE,
              run + "-" + i,
              s -> {
                s.setRunAt(Tasks.rfc3339(due));
                Destination sink = new Destination();
                sink.setUri(receiver.base() + "/" + run);
                if (sign) {
                  sink.setSigning(new Signing("lag"));
                }
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

  /** Arrival on the receiver's clock − {@code ce-time} (the due time), in ms, sorted. */
  static List<Long> lags(List<Receiver.Request> requests) {
    return requests.stream()
        .map(
            r ->
                Duration.between(
                        Objects.requireNonNull(Times.parseOrNull(r.header("ce-time"))), r.at())
                    .toMillis())
        .sorted()
        .toList();
  }

  static void report(String what, List<Long> sorted) {
    System.out.printf(
        "%s: n=%,d p50 %d ms, p99 %d ms, max %d ms, early %d%n",
        what,
        sorted.size(),
        OperatorScaleLab.percentile(sorted, 0.50),
        OperatorScaleLab.percentile(sorted, 0.99),
        sorted.isEmpty() ? -1 : sorted.get(sorted.size() - 1),
        sorted.stream().filter(l -> l < 0).count());
  }
}
