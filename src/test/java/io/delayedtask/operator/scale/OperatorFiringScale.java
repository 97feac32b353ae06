package io.delayedtask.operator.scale;

import io.delayedtask.operator.api.v1alpha1.DelayedTask;
import io.delayedtask.operator.testing.OperatorProcess;
import io.delayedtask.operator.testing.Tasks;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import java.util.stream.Collectors;

/**
 * Scale run (not a test): 5,000 DelayedTasks (status only) due within 5 s, through one operator
 * process; prints when they all fired and the p50/p99/max lag firedTime - dueTime from the status.
 *
 * <pre>
 * mvn -o package -DskipTests
 * mvn -o exec:java -Dexec.classpathScope=test -Dexec.mainClass=io.delayedtask.operator.scale.OperatorFiringScale \
 *   -Doperator.jar=target/delayed-task-operator.jar [-Dtasks=5000]
 * </pre>
 */
public final class OperatorFiringScale {
  private OperatorFiringScale() {}

  public static void main(String[] args) throws Exception {
    int count = Integer.getInteger("tasks", 5_000);
    try (OperatorScaleLab lab = new OperatorScaleLab()) {
      int port = OperatorScaleLab.freePort();
      try (OperatorProcess operator = lab.startOperator("scale-op", port)) {
        long t0 = System.nanoTime();
        while (!lab.ready(port)) {
          Thread.sleep(100); // a measuring loop, not a test
        }
        System.out.printf("operator ready in %d ms%n", (System.nanoTime() - t0) / 1_000_000);
        // Created first, due later: the due window starts once every task exists.
        Instant due = Instant.now().plus(Duration.ofSeconds(Long.getLong("leadSeconds", 120)));
        long createStart = System.nanoTime();
        for (int i = 0; i < count; i++) {
          lab.api.client().resource(Tasks.statusOnly(OperatorScaleLab.NAMESPACE, "t-" + i,
              due.plusMillis(i * 5_000L / count))).create();
        }
        System.out.printf("created %,d tasks in %d ms; first due %s%n", count,
            (System.nanoTime() - createStart) / 1_000_000, due);
        if (Instant.now().isAfter(due)) {
          System.out.println("WARNING: creating took longer than the lead; raise -DleadSeconds");
        }
        List<Long> lags = new ArrayList<>();
        Instant deadline = due.plusSeconds(600);
        while (Instant.now().isBefore(deadline)) {
          lags.clear();
          for (DelayedTask task : lab.api.client().resources(DelayedTask.class)
              .inNamespace(OperatorScaleLab.NAMESPACE).list().getItems()) {
            if (task.getStatus() != null && task.getStatus().getFiredTime() != null) {
              lags.add(Duration.between(Instant.parse(task.getStatus().getDueTime()),
                  Instant.parse(task.getStatus().getFiredTime())).toMillis());
            }
          }
          if (lags.size() == count) {
            break;
          }
          Thread.sleep(1_000);
        }
        lags.sort(null);
        System.out.printf("fired %,d of %,d; lag ms p50 %d, p99 %d, max %d, min %d; all fired by %s (due window ends %s)%n",
            lags.size(), count, OperatorScaleLab.percentile(lags, 0.50), OperatorScaleLab.percentile(lags, 0.99),
            lags.isEmpty() ? -1 : lags.get(lags.size() - 1), lags.isEmpty() ? -1 : lags.get(0), Instant.now(),
            due.plusSeconds(5));
        System.out.printf("operator heap in use %,d MB%n", lab.heapUsedBytes(port) / (1024 * 1024));
        printRequestsPerFiredTask(lab, due, count);
      }
    }
    System.exit(0);
  }

  /**
   * What the API server served from the start of the due window, per fired task, by method and
   * resource (the harness's own list calls included: one per second while it waits).
   */
  private static void printRequestsPerFiredTask(OperatorScaleLab lab, Instant windowStart, int fired) {
    Map<String, Long> byKind = lab.api.calls(call -> !call.at().isBefore(windowStart)).stream()
        .collect(Collectors.groupingBy(call -> call.method() + " " + resource(call.path()), TreeMap::new,
            Collectors.counting()));
    System.out.printf("API requests from the start of the due window, per fired task:%n");
    byKind.forEach((kind, n) -> System.out.printf("  %-40s %8d  %.2f%n", kind, n, (double) n / fired));
  }

  /** "delayedtasks/status", "delayedtasks (one)", "delayedtasks (list)", "events", "leases", ... */
  private static String resource(String path) {
    String bare = path.replaceFirst("\\?.*", "");
    Matcher m = Pattern.compile("/namespaces/[^/]+/([^/]+)(/[^/]+)?(/status)?$").matcher(bare);
    if (!m.find()) {
      return bare;
    }
    return m.group(1) + (m.group(3) != null ? "/status" : m.group(2) != null ? " (one)" : " (list)");
  }
}
