package io.delayedtask.operator.scale;

import io.delayedtask.operator.api.v1alpha1.DelayedTask;
import io.delayedtask.operator.api.v1alpha1.Destination;
import io.delayedtask.operator.api.v1alpha1.Phase;
import io.delayedtask.operator.config.SinkConfig;
import io.delayedtask.operator.task.time.Times;
import io.delayedtask.operator.testing.OperatorProcess;
import io.delayedtask.operator.testing.Ports;
import io.delayedtask.operator.testing.Receiver;
import io.delayedtask.operator.testing.Receiver.Answer;
import io.delayedtask.operator.testing.Tasks;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;

/**
 * Scale run (not a test): sink tasks through one operator process on each selected API server,
 * delivering to HTTP receivers on 127.0.0.1; prints the fire lag on the receiver's clock (arrival -
 * ce-time) beside the status-only tasks' firedTime - dueTime created in the same run:
 *
 * <ol>
 *   <li>(a 5 s warm-up of the same load, not reported)
 *   <li>a steady load at {@code -Drate} tasks per second (half a sink, half status only);
 *   <li>the same with a second receiver that answers after 5 s taking half the sink tasks: the fast
 *       receiver's lag must not move;
 *   <li>{@code -Dburst} sink tasks due at the same instant: lag, how long until all were delivered,
 *       and the operator's requests per task.
 * </ol>
 *
 * <pre>
 * mvn -o package -DskipTests
 * mvn -o exec:java -Dexec.classpathScope=test -Dexec.mainClass=io.delayedtask.operator.scale.SinkLagScale \
 *   -Doperator.jar=target/delayed-task-operator.jar [-Dtarget=real] [-Drate=17] [-Dseconds=20] [-Dburst=1000]
 * </pre>
 */
public final class SinkLagScale {
  private static final String NS = OperatorScaleLab.NAMESPACE;
  private static final Duration LEAD = Duration.ofSeconds(4);

  /**
   * Every sink task's {@code spec.data}: a JSON string of {@code -DdataBytes} characters (default
   * 16 KiB, issue 24's body); 0: no data, the payload's {@code {}} as before.
   */
  private static final int DATA_BYTES = Integer.getInteger("dataBytes", 16 * 1024);

  private static final String DATA =
      DATA_BYTES <= 0 ? null : "\"" + "x".repeat(Math.max(0, DATA_BYTES - 2)) + "\"";

  private SinkLagScale() {}

  public static void main(String[] args) throws Exception {
    for (String target : ScaleTarget.selected()) {
      run(target);
    }
    System.exit(0);
  }

  private static void run(String targetName) throws Exception {
    int rate = Integer.getInteger("rate", 17);
    int seconds = Integer.getInteger("seconds", 20);
    int burst = Integer.getInteger("burst", 1_000);
    try (OperatorScaleLab lab = new OperatorScaleLab(ScaleTarget.start(targetName));
        Receiver fast = Receiver.start();
        Receiver slow =
            Receiver.start().answer("/slow", Answer.status(200).after(Duration.ofSeconds(5)))) {
      OperatorScaleLab.banner(
          "SinkLagScale, "
              + rate
              + "/s for "
              + seconds
              + " s, then a burst of "
              + burst
              + (DATA == null
                  ? ""
                  : ", each sink task with a " + DATA.length() + "-byte data body"),
          lab.target);
      int port = Ports.freePort();
      try (OperatorProcess operator =
          lab.startOperator(
              "sink-op",
              port,
              OperatorProcess.jar(),
              Map.of(SinkConfig.ALLOWED_URIS, fast.base() + "," + slow.base()))) {
        System.out.printf("operator ready in %d ms%n", lab.awaitReady(operator, port));

        // Warm-up, not reported: the first deliveries of a fresh JVM load and compile the HTTP
        // client and the CloudEvents writer, and open the first connections.
        steady(lab, fast, null, "warmup", rate, 5);
        List<String> statusOnly = steady(lab, fast, null, "a", rate, seconds);
        SinkLoad.report(
            "1. steady, one receiver: sink lag (receiver clock)",
            SinkLoad.lags(fast.requestsTo("/a")));
        SinkLoad.report(
            "1. steady: status-only lag (firedTime - dueTime)", firedLags(lab, statusOnly));

        steady(lab, fast, slow, "b", rate, seconds);
        SinkLoad.report(
            "2. steady, half the sink tasks to a receiver answering after 5 s: the FAST receiver's lag",
            SinkLoad.lags(fast.requestsTo("/b")));
        SinkLoad.report(
            "2. the slow receiver's lag (arrival, not answer)",
            SinkLoad.lags(slow.requestsTo("/slow")));

        Instant from = Instant.now();
        Instant due = Instant.now().plus(Duration.ofSeconds(Long.getLong("burstLeadSeconds", 60)));
        lab.createAll(
            burst,
            OperatorScaleLab.createThreads(),
            i -> sinkTask("burst-" + i, due, fast.base() + "/burst"));
        System.out.printf("created %,d burst tasks, due %s%n", burst, due);
        awaitPhases(lab, "burst-", burst, Duration.ofMinutes(5));
        List<Receiver.Request> delivered = fast.requestsTo("/burst");
        SinkLoad.report(
            "3. burst of " + burst + " due at once: sink lag (receiver clock)",
            SinkLoad.lags(delivered));
        System.out.printf(
            "   bodies of the expected %,d bytes: %,d of %,d requests, every one a CloudEvent: %s%n",
            DATA == null ? 2 : DATA.length(),
            fast.requests().stream()
                .filter(r -> r.body().length() == (DATA == null ? 2 : DATA.length()))
                .count(),
            fast.requests().size(),
            fast.requests().stream().allMatch(r -> r.cloudEvent().isPresent()));
        Instant last =
            delivered.stream().map(Receiver.Request::at).max(Instant::compareTo).orElse(due);
        System.out.printf(
            "   all %,d delivered %,d ms after the due time (%.0f per second); requests received %,d%n",
            delivered.size(),
            Duration.between(due, last).toMillis(),
            burst * 1000.0 / Math.max(1, Duration.between(due, last).toMillis()),
            delivered.size());
        Thread.sleep(3_000); // a measuring pause: trailing requests are counted too
        Map<String, Long> requests =
            new TreeMap<>(lab.target.operatorRequests(from, Instant.now()));
        requests.keySet().removeIf(key -> key.contains("leases"));
        long total = requests.values().stream().mapToLong(Long::longValue).sum();
        System.out.printf(
            "   operator requests from the burst's creation on (Leases aside): %,d, %.2f per task%n",
            total, total / (double) burst);
        requests.forEach(
            (kind, count) ->
                System.out.printf(
                    "     %-40s %,8d  %.2f per task%n", kind, count, count / (double) burst));
      }
    }
  }

  /**
   * Creates {@code rate} tasks a second for {@code seconds}, each due {@link #LEAD} later; waits
   * for all.
   */
  private static List<String> steady(
      OperatorScaleLab lab, Receiver fast, Receiver slow, String run, int rate, int seconds)
      throws Exception {
    List<String> statusOnly = new ArrayList<>();
    List<String> all = new ArrayList<>();
    long start = System.nanoTime();
    for (int i = 0; i < rate * seconds; i++) {
      long at = start + i * 1_000_000_000L / rate;
      long wait = at - System.nanoTime();
      if (wait > 0) {
        Thread.sleep(
            wait / 1_000_000,
            (int) (wait % 1_000_000)); // pacing the load, not waiting for a result
      }
      Instant due = Instant.now().plus(LEAD);
      String name = run + "-" + i;
      DelayedTask task;
      if (i % 2 == 0) {
        task = Tasks.statusOnly(NS, name, due);
        statusOnly.add(name);
      } else if (slow != null && i % 4 == 1) {
        task = sinkTask(name, due, slow.base() + "/slow");
      } else {
        task = sinkTask(name, due, fast.base() + "/" + run);
      }
      lab.client().resource(task).create();
      all.add(name);
    }
    awaitPhases(lab, run + "-", all.size(), Duration.ofMinutes(2));
    return statusOnly;
  }

  private static DelayedTask sinkTask(String name, Instant due, String uri) {
    return Tasks.task(
        NS,
        name,
        s -> {
          s.setRunAt(Tasks.rfc3339(due));
          Destination sink = new Destination();
          sink.setUri(uri);
          s.setSink(sink);
          s.setData(DATA);
        });
  }

  /** Waits (a measuring loop) until every task named {@code prefix*} is finished. */
  private static void awaitPhases(OperatorScaleLab lab, String prefix, int count, Duration limit)
      throws InterruptedException {
    long deadline = System.nanoTime() + limit.toNanos();
    while (System.nanoTime() < deadline) {
      long finished =
          lab.client().resources(DelayedTask.class).inNamespace(NS).list().getItems().stream()
              .filter(t -> t.getMetadata().getName().startsWith(prefix))
              .filter(
                  t ->
                      t.getStatus() != null
                          && t.getStatus().getPhase() != null
                          && t.getStatus().getPhase().isFinished())
              .count();
      if (finished >= count) {
        return;
      }
      Thread.sleep(500);
    }
    System.out.println("WARNING: not every " + prefix + "* task finished within " + limit);
  }

  private static List<Long> firedLags(OperatorScaleLab lab, List<String> names) {
    return lab.client().resources(DelayedTask.class).inNamespace(NS).list().getItems().stream()
        .filter(t -> names.contains(t.getMetadata().getName()))
        .filter(t -> t.getStatus() != null && t.getStatus().getPhase() == Phase.Fired)
        .map(
            t ->
                Duration.between(
                        Times.parseOrNull(t.getStatus().getDueTime()),
                        Times.parseOrNull(t.getStatus().getFiredTime()))
                    .toMillis())
        .sorted()
        .toList();
  }
}
